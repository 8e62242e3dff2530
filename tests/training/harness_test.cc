// The run harness that both trainers share (training/): metrics.csv and its column upgrade,
// config overrides with "did you mean", the trainer registry, the parameter-identity check
// across ranks, the resume rule, and a whole scorer training run in one process (torch-free).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "common/checkpoint/checkpoint_store.h"
#include "common/comm/inproc/inproc_communicator.h"
#include "common/error.h"
#include "common/files.h"
#include "common/yaml_util.h"
#include "improve/labelling.h"
#include "improve/scorer_config.h"
#include "improve/scorer_training.h"
#include "training/config_overrides.h"
#include "training/metrics_csv.h"
#include "training/run.h"
#include "training/trainers.h"

namespace placeto {
namespace {

std::string temp_dir(const std::string& name) {
  const std::string d =
      ::testing::TempDir() + "/harness_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

TEST(MetricsCsv, FreshRunWritesTheHeaderAndResumedRunUpgradesOlderRows) {
  const std::string path = temp_dir("metrics") + "/metrics.csv";
  write_file_atomic(path, "epoch,loss\n1,0.5\n2,0.4\n");
  {
    MetricsCsv csv(path, "epoch,loss,phase,extra", false, {"imitate"});
    csv.rowf("%d,%.1f,rl,%d", 3, 0.3, 7);
  }
  EXPECT_EQ(read_file(path),
            "epoch,loss,phase,extra\n1,0.5,imitate,\n2,0.4,imitate,\n3,0.3,rl,7\n");
  {
    MetricsCsv csv(path, "epoch,loss,phase,extra", true);
    csv.row("1,0.9,imitate,");
  }
  EXPECT_EQ(read_file(path), "epoch,loss,phase,extra\n1,0.9,imitate,\n");
}

TEST(ConfigOverrides, SetKeysAndSectionsAndSuggestTheNearestKey) {
  const ConfigKeys keys{{"lr", "lr_final", "policy"}, {{"policy", {"hidden", "rounds"}}}};
  YAML::Node root = parse_yaml_text("lr: 0.1\npolicy: {hidden: 4}\n", "t");
  apply_overrides(root, {"lr=0.2", "policy.rounds=3"}, keys);
  EXPECT_DOUBLE_EQ(root["lr"].as<double>(), 0.2);
  EXPECT_EQ(root["policy"]["rounds"].as<int>(), 3);
  try {
    apply_override(root, "lr_fnal=1", keys);
    ADD_FAILURE() << "accepted an unknown key";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown config key 'lr_fnal' (did you mean 'lr_final'?)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(apply_override(root, "policy.hiden=2", keys), InputError);
  EXPECT_THROW(apply_override(root, "lr.x=2", keys), InputError);
  EXPECT_THROW(apply_override(root, "novalue", keys), InputError);
}

TEST(ScorerConfig, OldKeyNamesAreReadAsAliasesAndEveryKeyIsWrittenBack) {
  const ScorerTrainConfig c = parse_scorer_train_config(
      "search_policy: {families: [ptb], lr: 0.01, lr_end: 0.002, clip_norm: 3}\n", "old", {});
  EXPECT_DOUBLE_EQ(c.lr_final, 0.002);
  EXPECT_DOUBLE_EQ(c.grad_clip, 3);
  const std::string yaml = scorer_train_config_to_yaml(c);
  EXPECT_NE(yaml.find("lr_final: 0.002"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("rl_epochs: 0"), std::string::npos) << yaml;  // written even when 0
  EXPECT_EQ(scorer_train_config_to_yaml(parse_scorer_train_config(yaml, "again", {})), yaml);
  EXPECT_THROW(
      parse_scorer_train_config("search_policy: {lr_end: 0.1, lr_final: 0.1}\n", "both", {}),
      InputError);
  try {
    parse_scorer_train_config("search_policy: {epochs: 2}\n", "o", {"epoch=3"});
    ADD_FAILURE() << "accepted an unknown override";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'epochs'"), std::string::npos) << e.what();
  }
}

TEST(ScorerConfig, MemoryFactorsAreReadWrittenBackAndChecked) {
  const ScorerTrainConfig c =
      parse_scorer_train_config("search_policy: {memory_factors: [1.1, 1.5]}\n", "m", {});
  EXPECT_EQ(c.memory_factors, (std::vector<double>{1.1, 1.5}));
  const std::string yaml = scorer_train_config_to_yaml(c);
  EXPECT_EQ(parse_scorer_train_config(yaml, "again", {}).memory_factors, c.memory_factors);
  // A config without the key (every checkpoint before issue #33) writes none back.
  EXPECT_EQ(scorer_train_config_to_yaml(parse_scorer_train_config("search_policy: {}\n", "o", {}))
                .find("memory_factors"),
            std::string::npos);
  for (const char* bad : {"[0]", "[-1]", "[.nan]", "[1000]", "1.2"}) {
    try {
      parse_scorer_train_config(std::string("search_policy: {memory_factors: ") + bad + "}\n",
                                "bad.yaml", {});
      ADD_FAILURE() << "accepted memory_factors " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("bad.yaml"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("memory_factors"), std::string::npos) << e.what();
    }
  }
}

TEST(ScorerConfig, FeaturesNamesHowManyWhatIfColumnsTheScorerReads) {
  const ScorerTrainConfig c = parse_scorer_train_config("search_policy: {features: 27}\n", "f", {});
  EXPECT_EQ(c.features, 27);
  EXPECT_NE(scorer_train_config_to_yaml(c).find("features: 27"), std::string::npos);
  EXPECT_EQ(parse_scorer_train_config("search_policy: {}\n", "f", {}).features, 0);
  for (const char* bad : {"-1", "32", "1000"})
    EXPECT_THROW(
        parse_scorer_train_config(std::string("search_policy: {features: ") + bad + "}\n", "f", {}),
        InputError)
        << bad;
}

TEST(ScorerConfig, EvaluationOnlyFamiliesAreRefused) {
  try {
    parse_scorer_train_config("search_policy: {families: [ptb, linalg]}\n", "t.yaml", {});
    ADD_FAILURE() << "accepted the evaluation-only family linalg";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("evaluation-only"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t.yaml"), std::string::npos) << e.what();
  }
}

// Graph files (imported models) are trained on as well, on the clusters of at most
// graph_files_max_devices devices; the keys are written back and checked.
TEST(ScorerConfig, GraphFilesAreTrainedOnTheirClusters) {
  const ScorerTrainConfig c = parse_scorer_train_config(
      "search_policy: {families: [ptb], graphs: 2, starts: 1, graph_files: [a.json, b.json], "
      "graph_files_max_devices: 4}\n",
      "g", {});
  EXPECT_EQ(c.graph_files, (std::vector<std::string>{"a.json", "b.json"}));
  const ScorerTrainConfig back = parse_scorer_train_config(scorer_train_config_to_yaml(c), "b", {});
  EXPECT_EQ(back.graph_files, c.graph_files);
  EXPECT_EQ(back.graph_files_max_devices, 4);
  // Clusters of 2, 8 and 4 devices: ptb's 2 graphs on all three, each file on two.
  const std::vector<LabelJob> jobs = label_jobs(c, {2, 8, 4});
  int files = 0;
  for (const LabelJob& j : jobs) {
    if (j.family != kGraphFileJob) continue;
    ++files;
    EXPECT_NE(j.cluster, 1) << "a graph file on the 8-device cluster";
  }
  EXPECT_EQ(files, 4);
  EXPECT_EQ(jobs.size(), 6u + 4u);
  try {
    parse_scorer_train_config("search_policy: {graph_files_max_devices: -1}\n", "n.yaml", {});
    ADD_FAILURE() << "accepted graph_files_max_devices -1";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("graph_files_max_devices"), std::string::npos);
  }
  // A missing file is named when its graph is read.
  LabelJob j{kGraphFileJob, 0, 0, 0};
  try {
    label_job_graph(c, j);
    ADD_FAILURE() << "read a missing graph file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a.json"), std::string::npos) << e.what();
  }
}

TEST(Trainers, TheConfigsTopLevelKeyChoosesTheTrainer) {
  register_scorer_trainer();
  const std::string dir = temp_dir("trainers");
  write_file_atomic(dir + "/s.yaml", "search_policy: {epochs: 1}\n");
  EXPECT_EQ(trainer_for_config(dir + "/s.yaml").name, "scorer");
  write_file_atomic(dir + "/list.yaml", "- 1\n- 2\n");
  EXPECT_THROW(trainer_for_config(dir + "/list.yaml"), InputError);
  EXPECT_THROW(trainer_for_config(dir + "/missing.yaml"), InputError);
}

TEST(Harness, ParameterIdentityIsCheckedOnEveryRank) {
  InprocGroup group(2, CommOptions{});
  std::vector<std::string> errors(2);
  auto rank = [&](int r, bool differ) {
    std::unique_ptr<Communicator> comm = group.communicator(r);
    std::vector<float> params = {1.0f, 2.0f, 3.0f};
    if (differ && r == 1) params[2] = 3.5f;
    try {
      verify_identical_params(params, 7, *comm);
    } catch (const SystemError& e) {
      errors[r] = e.what();
    }
  };
  for (bool differ : {false, true}) {
    errors.assign(2, "");
    std::thread t1(rank, 1, differ);
    rank(0, differ);
    t1.join();
    for (int r = 0; r < 2; ++r) {
      if (differ) {
        EXPECT_NE(errors[r].find("parameters differ between rank 0 and rank 1 at iteration 7"),
                  std::string::npos)
            << errors[r];
      } else {
        EXPECT_EQ(errors[r], "");
      }
    }
  }
}

// A scorer run of 3 epochs in one process: metrics rows, checkpoints, and the resume rules of
// the harness (a second fresh run on the same directory is refused; auto resumes).
TEST(Harness, ScorerTrainingRunsResumesAndRefusesWithoutLibTorch) {
  const std::string dir = temp_dir("scorer_run");
  write_file_atomic(dir + "/cfg.yaml",
                    "search_policy:\n  families: [ptb]\n  graphs: 1\n  graph_seed: 3\n"
                    "  devices: [2]\n  starts: 1\n  max_moves: 2\n  keep_rows: 16\n"
                    "  epochs: 2\n  batch_states: 2\n  hidden1: 4\n  hidden2: 2\n");
  RunOptions o;
  o.config_path = dir + "/cfg.yaml";
  o.run_dir = dir + "/run";
  {
    auto comm = make_single_rank_communicator();
    EXPECT_EQ(run_scorer_training(o, *comm), kExitDone);
  }
  EXPECT_TRUE(file_exists(o.run_dir + "/checkpoints/ckpt_2.h5"));
  {
    auto comm = make_single_rank_communicator();
    EXPECT_THROW(run_scorer_training(o, *comm), InputError);  // holds checkpoints already
  }
  o.resume = "auto";
  o.overrides = {"epochs=3"};
  {
    auto comm = make_single_rank_communicator();
    EXPECT_EQ(run_scorer_training(o, *comm), kExitDone);
  }
  EXPECT_TRUE(file_exists(o.run_dir + "/checkpoints/ckpt_3.h5"));
  const std::string csv = read_file(o.run_dir + "/metrics.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4) << csv;  // header + 3 epochs
  o.overrides = {"epochs=3", "hidden1=5"};
  {
    auto comm = make_single_rank_communicator();
    try {
      run_scorer_training(o, *comm);
      ADD_FAILURE() << "resumed with another config";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("hidden1"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace placeto
