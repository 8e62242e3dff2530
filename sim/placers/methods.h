// Factories of the registered placers (one .cc per family of methods); the built-in table of
// registry.cc is the only intended caller.  docs/PLACERS.md describes each method.
#pragma once

#include <memory>

#include "sim/placers/placer.h"

namespace placeto {

// baseline_placers.cc
std::unique_ptr<Placer> make_single_placer();
std::unique_ptr<Placer> make_random_placer();
std::unique_ptr<Placer> make_round_robin_placer();
std::unique_ptr<Placer> make_expert_placer();
// metis_placer.cc
std::unique_ptr<Placer> make_metis_placer();
// list_placers.cc
std::unique_ptr<Placer> make_heft_placer();
std::unique_ptr<Placer> make_metf_placer();
std::unique_ptr<Placer> make_msct_placer();
// contiguous_placers.cc
std::unique_ptr<Placer> make_mtopo_placer();
std::unique_ptr<Placer> make_partition_placer();
// anneal_placer.cc
std::unique_ptr<Placer> make_anneal_placer();
std::unique_ptr<Placer> make_slack_anneal_placer();
std::unique_ptr<Placer> make_chain_anneal_placer();
// descent_placer.cc
std::unique_ptr<Placer> make_descent_placer();

}  // namespace placeto
