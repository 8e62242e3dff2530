#include "sim/placers/placer.h"

#include "common/error.h"
#include "sim/placers/methods.h"

namespace placeto {

const std::vector<std::string>& placer_names() {
  static const std::vector<std::string> names = {
      "single", "random", "round-robin", "expert", "metis", "heft", "m-etf", "m-sct", "anneal"};
  return names;
}

const std::vector<std::string>& fast_placer_names() {
  static const std::vector<std::string> names(placer_names().begin(), placer_names().end() - 1);
  return names;
}

std::unique_ptr<Placer> make_placer(const std::string& name) {
  if (name == "single") return make_single_placer();
  if (name == "random") return make_random_placer();
  if (name == "round-robin") return make_round_robin_placer();
  if (name == "expert") return make_expert_placer();
  if (name == "metis") return make_metis_placer();
  if (name == "heft") return make_heft_placer();
  if (name == "m-etf") return make_metf_placer();
  if (name == "m-sct") return make_msct_placer();
  if (name == "anneal") return make_anneal_placer();
  const auto& names = placer_names();
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  const std::string guess = did_you_mean_any(name, names.data(), names.size());
  throw InputError("unknown placement method '" + name + "'" +
                   (guess.empty() ? "" : " (did you mean '" + guess + "'?)") + "; known: " + known);
}

}  // namespace placeto
