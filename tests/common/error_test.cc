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

}  // namespace
}  // namespace placeto
