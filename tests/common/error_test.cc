#include "common/error.h"

#include <gtest/gtest.h>

#include "common/json_util.h"
#include "common/yaml_util.h"

namespace placeto {
namespace {

TEST(DidYouMean, SuggestsNearMissesOnly) {
  EXPECT_EQ(did_you_mean("lerning_rate", {"learning_rate", "entropy"}), "learning_rate");
  EXPECT_EQ(did_you_mean("zzzzzz", {"learning_rate", "entropy"}), "");
}

TEST(JsonField, NamesFileAndPathInErrors) {
  Json doc = Json::parse(R"({"nodes": [{"cost_us": "ten"}]})");
  JsonField root(doc, "g.json", "");
  try {
    root.at("nodes").at(size_t{0}).at("cost_us").as_finite_number();
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "g.json: nodes[0].cost_us: expected a number, got string \"ten\"");
  }
}

TEST(JsonText, TruncatedDocumentIsRejected) {
  EXPECT_THROW(parse_json_text(R"({"nodes": [)", "t.json"), InputError);
}

TEST(YamlField, UnknownKeySuggestsClosest) {
  YamlField root(parse_yaml_text("devics: 4\n", "c.yaml"), "c.yaml", "");
  try {
    root.check_keys({"devices", "name"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "c.yaml: devics: unknown key (did you mean 'devices'?)");
  }
}

TEST(YamlField, WrongTypeNamesValue) {
  YamlField root(parse_yaml_text("devices: four\n", "c.yaml"), "c.yaml", "");
  EXPECT_THROW(root.at("devices").as_int(), InputError);
}

TEST(Error, NamesAreEscapedForOneLineMessages) {
  EXPECT_EQ(quoted_name("conv1"), "\"conv1\"");
  EXPECT_EQ(quoted_name("a\"b\nc\\d\x01"), "\"a\\\"b\\nc\\\\d\\x01\"");
  EXPECT_EQ(printable_name("it's"), "it's");
  EXPECT_EQ(quoted_name("layer_\xc3\xa9"), "\"layer_\xc3\xa9\"");  // UTF-8 kept
  // Long names are cut at a character boundary.
  const std::string long_name = std::string(79, 'x') + "\xc3\xa9" + std::string(50, 'y');
  EXPECT_EQ(printable_name(long_name), std::string(79, 'x') + "...");
}

TEST(Yaml, DeepNestingAndAliasBombsAreRefused) {
  auto refusal = [](const std::string& text) -> std::string {
    try {
      parse_yaml_text(text, "c.yaml");
    } catch (const InputError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(refusal("devices: " + std::string(100000, '[') + std::string(100000, ']')),
            "c.yaml: not accepted: collections nest deeper than 64 levels (line 1)");
  // Brackets in quotes and comments do not count.
  EXPECT_EQ(refusal("name: '" + std::string(100, '[') + "' # " + std::string(100, '{')),
            "(accepted)");
  // Block nesting, counted on the tree.
  std::string block = "a:\n";
  for (int i = 1; i < 80; ++i) block += std::string(2 * i, ' ') + "- \n";
  EXPECT_NE(refusal(block).find("nest deeper than 64"), std::string::npos) << refusal(block);
  // Ten levels of ten references each: 10^10 values once expanded.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  EXPECT_NE(refusal(bomb).find("alias bomb"), std::string::npos) << refusal(bomb);
}

}  // namespace
}  // namespace placeto
