#include "training/trainers.h"

#include <mutex>
#include <vector>

#include "common/error.h"
#include "common/yaml_util.h"

namespace placeto {
namespace {

std::vector<TrainerInfo>& registry() {
  static std::vector<TrainerInfo> r;
  return r;
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void register_trainer(TrainerInfo info) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const TrainerInfo& t : registry())
    if (t.name == info.name) return;
  registry().push_back(std::move(info));
}

const TrainerInfo& trainer_for_config(const std::string& config_path) {
  const YAML::Node root = load_yaml_file(config_path);
  if (!root.IsMap())
    throw InputError(config_path + ": expected a map of config keys at the top level");
  std::lock_guard<std::mutex> lock(registry_mutex());
  const TrainerInfo* fallback = nullptr;
  for (const TrainerInfo& t : registry()) {
    if (t.top_key.empty()) {
      fallback = &t;
    } else if (root[t.top_key].IsDefined()) {
      return t;
    }
  }
  if (fallback) return *fallback;
  throw InputError(config_path +
                   ": a Placeto policy config (no top-level 'search_policy' key), but this build "
                   "has no LibTorch, so it can train only the learned search's scorer "
                   "(apt install libtorch-dev and rebuild)");
}

}  // namespace placeto
