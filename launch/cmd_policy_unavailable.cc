// Built instead of cmd_policy.cc when LibTorch is not available: the learning commands say
// so clearly instead of being silently absent.
#include "common/error.h"
#include "launch/commands.h"

namespace placeto {

Placement place_graph_with_policy(const std::string&, const Graph&, const Cluster&, int, int64_t,
                                  double*) {
  throw InputError(
      "--method policy needs LibTorch; this build has none (apt install "
      "libtorch-dev and rebuild)");
}

void register_learning_commands(CLI::App&) {}

}  // namespace placeto
