#include "sim/placers/registry.h"

#include <algorithm>
#include <stdexcept>

#include "common/error.h"
#include "sim/placers/methods.h"

namespace placeto {
namespace {

// A classical method that ignores its options at construction.
template <std::unique_ptr<Placer> (*Factory)()>
std::unique_ptr<Placer> classical(const PlacerOptions&) {
  return Factory();
}

class BestPlacer : public Placer {
 public:
  std::string name() const override { return "best"; }
  Placement place(const Graph& g, const Cluster& c, const PlacerOptions& o) const override {
    return best_fast_placement(g, c, o);
  }
};

std::vector<PlacerInfo> built_in() {
  using K = PlacerKind;
  std::vector<PlacerInfo> t;
  auto add = [&](const char* name, const char* summary, PlacerKind kind, bool stochastic,
                 std::unique_ptr<Placer> (*make)(const PlacerOptions&)) {
    PlacerInfo i;
    i.name = name;
    i.summary = summary;
    i.kind = kind;
    i.stochastic = stochastic;
    i.make = make;
    t.push_back(std::move(i));
  };
  add("single", "every op on the one fastest feasible device", K::kFast, false,
      classical<make_single_placer>);
  add("random", "best of --samples uniform random placements (default 16)", K::kFast, true,
      classical<make_random_placer>);
  t.back().takes_samples = true;
  add("round-robin", "ops dealt to devices in topological order", K::kFast, false,
      classical<make_round_robin_placer>);
  add("expert", "pipeline split of the topological order by device speed", K::kFast, false,
      classical<make_expert_placer>);
  add("metis", "METIS k-way partition balancing compute, cutting few bytes", K::kFast, false,
      classical<make_metis_placer>);
  add("heft", "list scheduling by upward rank, earliest finish time", K::kFast, false,
      classical<make_heft_placer>);
  add("m-etf", "memory-aware earliest task first (Baechi)", K::kFast, false,
      classical<make_metf_placer>);
  add("m-sct", "memory-aware small communication time (Baechi)", K::kFast, false,
      classical<make_msct_placer>);
  add("m-topo", "memory-aware topological fill of devices up to a balanced share (Baechi)",
      K::kFast, false, classical<make_mtopo_placer>);
  add("partition",
      "contiguous split of the forward ops (with their backward ops) by dynamic programming "
      "under each device's memory",
      K::kFast, false, classical<make_partition_placer>);
  add("best", "the best of the fast placers (feasible first, then least overflow, then fastest)",
      K::kComposite, false, [](const PlacerOptions&) -> std::unique_ptr<Placer> {
        return std::make_unique<BestPlacer>();
      });
  t.back().takes_samples = true;
  add("anneal", "simulated annealing over single-op moves from 'best' (--budget, --time-ms)",
      K::kSearch, true, classical<make_anneal_placer>);
  t.back().takes_budget = true;
  t.back().takes_start = true;
  add("slack-anneal",
      "anneal drawing the op to move by its criticality (slack) in the current schedule "
      "(--budget, --time-ms)",
      K::kSearch, true, classical<make_slack_anneal_placer>);
  t.back().takes_budget = true;
  t.back().takes_start = true;
  add("chain-anneal",
      "anneal that also moves segments of forward chains (layer stacks, branches) with their "
      "training ops, for memory-bound models (--budget, --time-ms)",
      K::kSearch, true, classical<make_chain_anneal_placer>);
  t.back().takes_budget = true;
  t.back().takes_start = true;
  add("descent",
      "steepest descent over single-op moves from 'best' to a local optimum (--budget, "
      "--time-ms)",
      K::kSearch, false, classical<make_descent_placer>);
  t.back().takes_budget = true;
  t.back().takes_start = true;
  return t;
}

std::vector<PlacerInfo>& table() {
  static std::vector<PlacerInfo> t = built_in();
  return t;
}

}  // namespace

void register_placer(PlacerInfo info) {
  if (info.name.empty() || !info.make)
    throw std::logic_error("register_placer: a method needs a name and a factory");
  if (find_placer(info.name))
    throw std::logic_error("register_placer: '" + info.name + "' is registered already");
  table().push_back(std::move(info));
}

const std::vector<PlacerInfo>& registered_placers() { return table(); }

const PlacerInfo* find_placer(const std::string& name) {
  for (const PlacerInfo& i : table())
    if (i.name == name) return &i;
  return nullptr;
}

const PlacerInfo& placer_info(const std::string& name) {
  if (const PlacerInfo* i = find_placer(name)) return *i;
  std::vector<std::string> names;
  for (const PlacerInfo& i : table()) names.push_back(i.name);
  const std::string guess = did_you_mean_any(name, names.data(), names.size());
  throw InputError("unknown placement method '" + name + "'" +
                   (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                   "; known: " + placer_list(names));
}

std::vector<std::string> placer_names_of(PlacerKind kind) {
  std::vector<std::string> out;
  for (const PlacerInfo& i : table())
    if (i.kind == kind) out.push_back(i.name);
  return out;
}

std::vector<std::string> placer_names() {
  std::vector<std::string> out;
  for (const PlacerInfo& i : table())
    if ((i.kind == PlacerKind::kFast || i.kind == PlacerKind::kSearch) && !i.needs_checkpoint &&
        !i.accepts_checkpoint)
      out.push_back(i.name);
  return out;
}

std::vector<std::string> fast_placer_names() { return placer_names_of(PlacerKind::kFast); }

std::string placer_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::vector<std::string> parse_placer_list(const std::string& list, const std::string& what) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(pos, end - pos);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item.empty()) throw InputError(what + ": empty method name");
    try {
      placer_info(item);
    } catch (const InputError& e) {
      throw InputError(what + ": " + e.what());
    }
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw InputError(what + ": '" + item + "' is listed twice");
    out.push_back(item);
    pos = end + 1;
  }
  return out;
}

std::string placer_help() {
  std::string out;
  for (const PlacerInfo& i : table()) {
    std::string line = "  " + i.name;
    line.resize(std::max<size_t>(line.size() + 1, 17), ' ');
    out += line + i.summary + "\n";
  }
  return out;
}

void validate_options(const PlacerInfo& info, const PlacerOptions& o, const std::string& what) {
  const std::string prefix = what.empty() ? "" : what + ": ";
  if (o.initial && !info.takes_start)
    throw InputError(prefix + "method '" + info.name + "' does not take a start placement");
  if (info.needs_checkpoint && o.checkpoint.empty())
    throw InputError(prefix + "method '" + info.name + "' needs a checkpoint");
  if (!info.needs_checkpoint && !info.accepts_checkpoint && !o.checkpoint.empty())
    throw InputError(prefix + "method '" + info.name + "' does not take a checkpoint");
  if (o.time_ms < 0) throw InputError(prefix + "time_ms must be >= 0");
  if (!(o.anneal_t_start >= 0 && o.anneal_t_start < 1))
    throw InputError(prefix +
                     "anneal_t_start must be in [0, 1) (a fraction of the start's score), got " +
                     std::to_string(o.anneal_t_start));
  if (o.time_ms > 0 && o.budget > 0)
    throw InputError(prefix + "give a budget or a time (--budget or --time-ms), not both");
}

std::unique_ptr<Placer> make_placer(const std::string& name, const PlacerOptions& options) {
  const PlacerInfo& info = placer_info(name);
  validate_options(info, options, "");
  return info.make(options);
}

}  // namespace placeto
