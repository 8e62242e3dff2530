// The placer registry: one table of every placement method -- its name, what it is, whether
// it is fast or searches, whether it is stochastic, which options it takes -- read by
// `placeto place`, `compare`, `eval`, `env.start: placer:NAME`, `imitation_teacher`, the start
// of every search and every --help.  An unknown name is rejected with the closest names.
//
// The classical methods are built in.  Other libraries add theirs with register_placer() at
// start-up (the learned policy's placers: register_policy_placers() in learner/policy_io.h; the
// learned search's: register_learned_search_placers() in improve/search_placers.h); adding a
// method is one registration.  Registration is not thread-safe: do it before any thread places.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/placers/placer.h"

namespace placeto {

enum class PlacerKind {
  kFast,       // a classical heuristic: milliseconds, no budget ("best classical" is their best)
  kComposite,  // "best": the best of the fast placers by the rule in protocol.h
  kSearch,     // improves placements by simulating many of them (takes a budget / time)
  kLearned,    // a trained policy (needs a checkpoint)
};

struct PlacerInfo {
  std::string name;
  std::string summary;  // one line, for --help and docs
  PlacerKind kind = PlacerKind::kFast;
  bool stochastic = false;          // the result depends on options.seed
  bool takes_budget = false;        // options.budget and options.time_ms
  bool takes_start = false;         // options.initial
  bool takes_samples = false;       // options.samples
  bool needs_checkpoint = false;    // options.checkpoint
  bool accepts_checkpoint = false;  // options.checkpoint optional (needs_checkpoint implies it)
  // Builds the placer.  Learned placers load their checkpoint here (once, not per graph).
  std::function<std::unique_ptr<Placer>(const PlacerOptions&)> make;
};

// Adds a method after the built-in ones (registry order is the order of the tables and the
// tie-break of "best classical").  Throws std::logic_error if the name is taken.
void register_placer(PlacerInfo info);

// Every registered method, in registry order: the fast placers, "best", the searches, then
// whatever was registered later.
const std::vector<PlacerInfo>& registered_placers();
// nullptr when no method has this name.
const PlacerInfo* find_placer(const std::string& name);
// Throws InputError for an unknown name, with "did you mean" and the list of names.
const PlacerInfo& placer_info(const std::string& name);

// The classical methods (kinds fast and search, "best" and whatever needs or accepts a
// checkpoint left out), fast placers first: the methods `placeto compare` runs by default.
std::vector<std::string> placer_names();
// The fast placers: "best classical" in every report is the best of these.
std::vector<std::string> fast_placer_names();
// Names of one kind, in registry order.
std::vector<std::string> placer_names_of(PlacerKind kind);
// "single, random, ..., anneal" for help texts and error messages.
std::string placer_list(const std::vector<std::string>& names);
// "a, b ,c" -> {a, b, c}: every name checked against the registry ("did you mean"), empty
// items and repeats refused; errors start with `what` (e.g. "--methods 'a,b'").
std::vector<std::string> parse_placer_list(const std::string& list, const std::string& what);
// One line per method, "  name  summary", for --help.
std::string placer_help();

// Checks `options` against what the method takes: a start placement, a checkpoint, a budget
// and a time, with an InputError naming the option (`what` prefixes the message).
void validate_options(const PlacerInfo& info, const PlacerOptions& options,
                      const std::string& what);

// placer_info(name).make(options), after validate_options.
std::unique_ptr<Placer> make_placer(const std::string& name,
                                    const PlacerOptions& options = PlacerOptions{});

// The best placement of the fast placers run with `options`, by the rule of protocol.h (the
// memory rule of memory_rule.h: feasible first, then the least overflow, then fastest; ties by
// registry order): the "best" method, every search's default start and the episode start
// "placer:best".  `skip`: fast placers left out (never `single`).
Placement best_fast_placement(const Graph& graph, const Cluster& cluster,
                              const PlacerOptions& options,
                              const std::vector<std::string>& skip = {});

}  // namespace placeto
