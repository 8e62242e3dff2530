// The `comm` config section: both spellings, defaults, round trip, and errors that name
// the file, key and value.
#include "common/comm/comm_options.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace placeto {
namespace {

CommOptions read(const std::string& text) {
  YamlField root(parse_yaml_text(text, "run.yaml"), "run.yaml", "");
  return read_comm_options(root.at("comm"));
}

std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CommOptions, ScalarNamesTheBackend) {
  EXPECT_EQ(read("comm: nccl\n").backend, "nccl");
  EXPECT_TRUE(read("comm: nccl\n").deterministic);
}

TEST(CommOptions, MissingSectionGivesDefaults) {
  const CommOptions options = read("other: 1\n");
  EXPECT_EQ(options.backend, "auto");
  EXPECT_TRUE(options.deterministic);
  EXPECT_EQ(options.timeout_s, 0);
}

TEST(CommOptions, MapFormRoundTrips) {
  const CommOptions options =
      read("comm:\n  backend: mpi\n  deterministic: false\n  timeout_s: 30\n");
  EXPECT_EQ(options.backend, "mpi");
  EXPECT_FALSE(options.deterministic);
  EXPECT_EQ(options.timeout_s, 30);
  YAML::Node doc;
  doc["comm"] = comm_options_to_yaml(options);
  const CommOptions back = read(YAML::Dump(doc));
  EXPECT_EQ(back.backend, "mpi");
  EXPECT_FALSE(back.deterministic);
  EXPECT_EQ(back.timeout_s, 30);
}

TEST(CommOptions, ErrorsNameFileKeyAndValue) {
  EXPECT_EQ(error_of("comm: ncl\n"),
            "run.yaml: comm: unknown backend 'ncl' (did you mean 'nccl'?); choose auto, mpi or "
            "nccl");
  EXPECT_EQ(error_of("comm:\n  backend: mpii\n"),
            "run.yaml: comm.backend: unknown backend 'mpii' (did you mean 'mpi'?); choose auto, "
            "mpi or nccl");
  EXPECT_NE(error_of("comm:\n  timeout_s: -1\n").find("run.yaml: comm.timeout_s: must be"),
            std::string::npos);
  EXPECT_NE(error_of("comm:\n  determinstic: true\n").find("did you mean 'deterministic'"),
            std::string::npos);
}

}  // namespace
}  // namespace placeto
