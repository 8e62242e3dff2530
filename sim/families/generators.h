// The per-family graph generators behind generate_graph() (sim/families/family.h).  Internal
// to sim/families.  Each call builds one graph from its own FamilyRng; a FamilyRng is not
// thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/rng.h"
#include "sim/families/family.h"
#include "sim/graph.h"

namespace placeto {

// The generators' random choices: the project's portable Rng (common/rng.h).
using FamilyRng = Rng;

// REQUIRES: `spec` resolved (resolve_family_spec).
Graph build_cifar10_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);
Graph build_ptb_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);
Graph build_nmt_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);
Graph build_linalg_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);
Graph build_layered_graph(const FamilySpec& spec, FamilyRng& rng, const std::string& name);

}  // namespace placeto
