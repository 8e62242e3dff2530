#include "sim/families/family.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/files.h"
#include "common/json_util.h"
#include "common/rng.h"
#include "sim/cost_model.h"
#include "sim/families/generators.h"
#include "sim/graph_io.h"

namespace placeto {

namespace {
constexpr int kManifestVersion = 1;
constexpr uint64_t kSplitStream = 0x5350'4C49'5400'0000ull;  // "SPLIT"

Json spec_to_json(const FamilySpec& s) {
  return Json{{"family", s.family},         {"profile", s.profile},
              {"batch", s.batch},           {"width", s.width},
              {"cell_nodes", s.cell_nodes}, {"steps", s.steps},
              {"layers", s.layers},         {"vocab", s.vocab}};
}

void check_range(const FamilySpec& s, const char* field, int value, int lo, int hi) {
  if (value < lo || value > hi)
    throw InputError("family '" + s.family + "': " + field + " must be in [" + std::to_string(lo) +
                     ", " + std::to_string(hi) + "], got " + std::to_string(value));
}
}  // namespace

std::vector<std::string> family_names() { return {"cifar10", "ptb", "nmt", "layered"}; }

bool evaluation_only_family(const std::string& family) { return family == "linalg"; }

FamilySpec default_family_spec(const std::string& family) {
  FamilySpec s;
  s.family = family;
  if (family == "cifar10") {
    s.batch = 128;
    s.width = 36;
    s.cell_nodes = 5;
    s.layers = 2;
  } else if (family == "ptb") {
    s.batch = 64;
    s.width = 650;
    s.cell_nodes = 8;
    s.steps = 8;
    s.layers = 2;
    s.vocab = 10000;
  } else if (family == "nmt") {
    s.batch = 64;
    s.width = 512;
    s.cell_nodes = 6;
    s.steps = 6;
    s.layers = 1;
    s.vocab = 16000;
  } else if (family == "linalg" || family == "layered") {
    // linalg: width (tile size) and steps (tiles per side) stay 0, drawn per graph; layered:
    // width (widest layer) and steps (depth) likewise.
  } else {
    throw InputError("unknown graph family '" + family +
                     "' (known: cifar10, ptb, nmt, layered; for evaluation only: linalg)");
  }
  return s;
}

FamilySpec resolve_family_spec(const FamilySpec& in) {
  FamilySpec d = default_family_spec(in.family);
  FamilySpec s = in;
  device_profile(s.profile);  // rejects unknown profiles
  if (s.family == "linalg") {
    if (s.width != 0) check_range(s, "width (tile size)", s.width, 16, 8192);
    if (s.steps != 0) check_range(s, "steps (tiles per side)", s.steps, 2, 16);
    return s;
  }
  if (s.family == "layered") {
    if (s.width != 0) check_range(s, "width (widest layer)", s.width, 1, 256);
    if (s.steps != 0) check_range(s, "steps (depth)", s.steps, 1, 4096);
    return s;
  }
  if (s.batch == 0) s.batch = d.batch;
  if (s.width == 0) s.width = d.width;
  if (s.cell_nodes == 0) s.cell_nodes = d.cell_nodes;
  if (s.steps == 0) s.steps = d.steps;
  if (s.layers == 0) s.layers = d.layers;
  if (s.vocab == 0) s.vocab = d.vocab;
  check_range(s, "batch", s.batch, 1, 1 << 16);
  check_range(s, "width", s.width, 1, 1 << 16);
  check_range(s, "cell_nodes", s.cell_nodes, 1, 64);
  check_range(s, "layers", s.layers, 1, 16);
  if (s.family != "cifar10") {
    check_range(s, "steps", s.steps, 1, 256);
    check_range(s, "vocab", s.vocab, 2, 1 << 22);
  }
  return s;
}

Graph generate_graph(const FamilySpec& in, int index, uint64_t seed) {
  PLACETO_CHECK_GE(index, 0);
  const FamilySpec spec = resolve_family_spec(in);
  FamilyRng rng(derive_seed(seed, static_cast<uint64_t>(index)));
  const std::string name = spec.family + "_" + std::to_string(index);
  if (spec.family == "cifar10") return build_cifar10_graph(spec, rng, name);
  if (spec.family == "ptb") return build_ptb_graph(spec, rng, name);
  if (spec.family == "linalg") return build_linalg_graph(spec, rng, name);
  if (spec.family == "layered") return build_layered_graph(spec, rng, name);
  return build_nmt_graph(spec, rng, name);
}

int default_test_count(int count) { return count / 4; }

FamilyManifest generate_family(const FamilySpec& in, int count, uint64_t seed,
                               const std::string& out_dir, int test_count) {
  const FamilySpec spec = resolve_family_spec(in);
  if (count < 1) throw InputError("--count must be >= 1, got " + std::to_string(count));
  if (test_count < 0 || test_count >= count)
    throw InputError("the test split must hold between 0 and count - 1 = " +
                     std::to_string(count - 1) + " graphs, got " + std::to_string(test_count));
  make_directories(out_dir);
  FamilyManifest m;
  m.family = spec.family;
  m.seed = seed;
  m.count = count;
  m.profile = spec.profile;
  std::vector<std::string> files;
  for (int i = 0; i < count; ++i) {
    Graph g = generate_graph(spec, i, seed);
    files.push_back(g.name() + ".json");
    save_graph(g, out_dir + "/" + files.back());
  }
  // A seeded Fisher-Yates shuffle picks the test graphs.
  std::vector<int> order(count);
  for (int i = 0; i < count; ++i) order[i] = i;
  FamilyRng rng(derive_seed(seed, kSplitStream));
  for (int i = count - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  std::vector<int> test(order.begin(), order.begin() + test_count);
  std::sort(test.begin(), test.end());
  for (int i = 0; i < count; ++i)
    (std::binary_search(test.begin(), test.end(), i) ? m.test : m.train).push_back(files[i]);
  Json doc{{"format", "placeto-family"},
           {"version", kManifestVersion},
           {"family", m.family},
           {"seed", m.seed},
           {"count", m.count},
           {"profile", m.profile},
           {"spec", spec_to_json(spec)},
           {"train", m.train},
           {"test", m.test}};
  write_file_atomic(out_dir + "/manifest.json", doc.dump(1) + "\n");
  return m;
}

namespace {
std::string manifest_file(const std::string& dir_or_file) {
  if (dir_or_file.size() >= 5 && dir_or_file.substr(dir_or_file.size() - 5) == ".json")
    return dir_or_file;
  return dir_or_file + "/manifest.json";
}

std::vector<std::string> read_names(const JsonField& f) {
  f.expect_array();
  std::vector<std::string> out;
  for (size_t i = 0; i < f.size(); ++i) {
    std::string name = f.at(i).as_string();
    if (name.empty() || name.find("..") != std::string::npos || name[0] == '/')
      f.at(i).fail("must be a file name inside the family's directory, got '" + name + "'");
    out.push_back(name);
  }
  return out;
}
}  // namespace

FamilyManifest load_family_manifest(const std::string& dir_or_file) {
  const std::string path = manifest_file(dir_or_file);
  Json doc = parse_json_file(path);
  JsonField root(doc, path, "");
  root.expect_object();
  if (root.at("format").as_string() != "placeto-family")
    root.at("format").fail("expected \"placeto-family\"");
  if (root.at("version").as_int() != kManifestVersion)
    root.at("version").fail("unsupported version (this build reads " +
                            std::to_string(kManifestVersion) + ")");
  FamilyManifest m;
  m.family = root.at("family").as_string();
  const Json& seed = root.at("seed").value();
  if (!seed.is_number_unsigned() && !(seed.is_number_integer() && seed.get<int64_t>() >= 0))
    root.at("seed").fail("expected a non-negative integer, got " + json_type_and_value(seed));
  m.seed = seed.get<uint64_t>();
  m.count = static_cast<int>(root.at("count").as_nonnegative_int());
  m.profile = root.has("profile") ? root.at("profile").as_string() : "k80";
  m.train = read_names(root.at("train"));
  m.test = read_names(root.at("test"));
  if (static_cast<int>(m.train.size() + m.test.size()) != m.count)
    root.at("count").fail("is " + std::to_string(m.count) + " but train and test list " +
                          std::to_string(m.train.size() + m.test.size()) + " files");
  std::vector<std::string> all(m.train);
  all.insert(all.end(), m.test.begin(), m.test.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i] == all[i - 1]) root.fail("file '" + all[i] + "' is listed twice");
  return m;
}

std::vector<std::string> manifest_paths(const std::string& dir_or_file,
                                        const std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  const std::string manifest = manifest_file(dir_or_file);
  const std::string dir = parent_directory(manifest);
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(dir, ec);
  std::vector<std::string> out;
  for (const auto& f : files) {
    // read_names() refused "..", absolute paths and empty names; a symbolic link inside the
    // folder that leads out of it is refused here.
    const fs::path real = fs::weakly_canonical(fs::path(dir) / f, ec);
    const auto rel = real.lexically_relative(root);
    if (ec || rel.empty() || *rel.begin() == "..")
      throw InputError(manifest + ": " + quoted_name(f) + " resolves to " + real.string() +
                       ", outside the family's directory " + root.string());
    out.push_back(dir + "/" + f);
  }
  return out;
}

}  // namespace placeto
