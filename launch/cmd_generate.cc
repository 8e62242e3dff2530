// placeto generate: write a family of ENAS-style training graphs and its manifest.
#include <iostream>
#include <memory>

#include "common/error.h"
#include "common/json_util.h"
#include "launch/commands.h"
#include "sim/families/family.h"

namespace placeto {
namespace {

struct GenerateArgs {
  FamilySpec spec;
  int count = 32;
  uint64_t seed = 0;
  int test = -1;
  std::string out;
};

void run_generate(const GenerateArgs& a) {
  const int test = a.test < 0 ? default_test_count(a.count) : a.test;
  FamilyManifest m = generate_family(a.spec, a.count, a.seed, a.out, test);
  Json out{{"family", m.family}, {"count", m.count},        {"seed", m.seed},
           {"out", a.out},       {"train", m.train.size()}, {"test", m.test.size()}};
  std::cout << out.dump() << std::endl;
}

}  // namespace

void register_generate_command(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Write a family of training graphs (ENAS-style cells) and manifest.json");
  cmd->add_option("--family", a->spec.family,
                  "cifar10, ptb, nmt or layered (random layered DAGs); linalg (tiled Cholesky, "
                  "LU and stencil task graphs) is for evaluation only")
      ->required()
      ->check(CLI::IsMember({"cifar10", "ptb", "nmt", "layered", "linalg"}));
  cmd->add_option("--count", a->count, "Number of graphs")->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", a->seed, "Seed; the same seed gives byte-identical files");
  cmd->add_option("--out", a->out, "Output directory")->required();
  cmd->add_option("--test", a->test, "Graphs in the test split (default: count / 4)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--profile", a->spec.profile, "Cost-model profile (k80, v100, a100, h100)");
  cmd->add_option("--batch", a->spec.batch, "Batch size (default: the family's)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--width", a->spec.width,
                  "Channels (cifar10), hidden size (ptb, nmt) or tile size (linalg)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--cell-nodes", a->spec.cell_nodes, "Nodes per cell")->check(CLI::Range(1, 64));
  cmd->add_option("--steps", a->spec.steps,
                  "Unrolled time steps (ptb, nmt) or tiles per side (linalg)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--layers", a->spec.layers, "Normal cells per stage / stacked cells")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--vocab", a->spec.vocab, "Vocabulary size (ptb, nmt)")
      ->check(CLI::Range(2, 1 << 22));
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace placeto
