// Options shared by `placeto place` and `placeto compare`: the cluster (a file or a device
// count) and the placer options (seed, budget, samples, time limit).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "sim/cluster.h"
#include "sim/placers/placer.h"

namespace placeto {

struct PlacerCliArgs {
  std::string cluster;  // YAML file; empty means default_cluster(devices)
  int devices = 0;
  PlacerOptions options;
};

void add_placer_cli_options(CLI::App* cmd, PlacerCliArgs* args);

// The cluster file if given (--devices, when also given, must agree), else `devices`
// identical devices.  Throws InputError when neither is given or they disagree.
Cluster cluster_from_cli(const PlacerCliArgs& args);

}  // namespace placeto
