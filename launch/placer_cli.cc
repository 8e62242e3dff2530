#include "launch/placer_cli.h"

#include "common/error.h"

namespace placeto {

void add_placer_cli_options(CLI::App* cmd, PlacerCliArgs* a) {
  cmd->add_option("--devices", a->devices, "Number of devices (or give --cluster)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--cluster", a->cluster, "Cluster description (YAML, docs/FORMATS.md)");
  cmd->add_option("--seed", a->options.seed, "Random seed (default 1)");
  cmd->add_option("--budget", a->options.budget, "anneal: number of simulations (default 2000)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--time-ms", a->options.time_ms,
                  "Searches: size the budget to this many milliseconds of placement time "
                  "(the schedule completes; instead of --budget)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--time-limit", a->options.time_limit_s,
                  "anneal: stop after this many seconds (default: no limit; makes results "
                  "depend on machine speed)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--samples", a->options.samples,
                  "random: placements drawn (default 16); policy: best of k episodes")
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--search-set", a->options.search_settings,
                  "Learned search (policy-search, scorer-greedy, auto): key=value settings of "
                  "its moves: group_share, segment_share, swap_share (shares of candidates "
                  "widened to an op's training group, a forward-chain segment, a swap)");
}

Cluster cluster_from_cli(const PlacerCliArgs& a) { return resolve_cluster(a.cluster, a.devices); }

}  // namespace placeto
