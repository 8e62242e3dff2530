#include "sim/graph_set.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/files.h"
#include "sim/families/family.h"
#include "sim/graph_io.h"

namespace placeto {

std::vector<NamedGraph> load_graph_split(const std::string& dir, const std::string& split) {
  if (split != "train" && split != "test" && split != "all")
    throw InputError("split '" + split + "' is not one of train, test, all");
  std::vector<std::string> paths;
  if (file_exists(dir + "/manifest.json")) {
    FamilyManifest m = load_family_manifest(dir);
    std::vector<std::string> files;
    if (split != "test") files.insert(files.end(), m.train.begin(), m.train.end());
    if (split != "train") files.insert(files.end(), m.test.begin(), m.test.end());
    paths = manifest_paths(dir, files);
  } else {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw InputError(dir + ": not a directory of graphs (no manifest.json either)");
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.is_regular_file() && e.path().extension() == ".json")
        paths.push_back(e.path().string());
    if (ec) throw SystemError(dir + ": cannot list: " + ec.message());
    std::sort(paths.begin(), paths.end());
  }
  if (paths.empty()) throw InputError(dir + ": no graphs (*.json) in split '" + split + "'");
  std::vector<NamedGraph> out;
  for (const auto& p : paths) {
    NamedGraph ng;
    ng.path = p;
    ng.name = std::filesystem::path(p).stem().string();
    ng.graph = load_graph(p);
    out.push_back(std::move(ng));
  }
  return out;
}

}  // namespace placeto
