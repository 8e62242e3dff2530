#include "common/checkpoint/checkpoint_file.h"

#include <cstring>
#include <ctime>
#include <set>

#include "common/checkpoint/file_digest.h"
#include "common/checkpoint/hdf5_file.h"
#include "common/files.h"

namespace placeto {
namespace {

constexpr const char* kExpAvg = "exp_avg";
constexpr const char* kExpAvgSq = "exp_avg_sq";
constexpr const char* kRankPrefix = "rank_";

void check_name(const std::string& file, const std::string& group, const std::string& name) {
  const std::string where = file + ": " + group + ": name \"" + name + "\"";
  if (name.empty()) throw InputError(where + " is empty");
  if (name.front() == '/' || name.back() == '/')
    throw InputError(where + " must not start or end with '/'");
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      throw InputError(where + " has an empty, \".\" or \"..\" component");
    start = end + 1;
  }
}

// Validates every name and rejects a name that is a '/'-prefix of another (HDF5 could not
// make "a" both a dataset and the group holding "a/b").
template <typename V>
void check_names(const std::string& file, const std::string& group,
                 const std::map<std::string, V>& m) {
  for (const auto& [name, value] : m) {
    check_name(file, group, name);
    auto it = m.lower_bound(name + "/");
    if (it != m.end() && it->first.compare(0, name.size() + 1, name + "/") == 0)
      throw InputError(file + ": " + group + ": name \"" + name + "\" is also the group of \"" +
                       it->first + "\"; rename one of them");
  }
}

void check_arrays(const std::string& file, const std::string& group,
                  const std::map<std::string, NamedArray>& m) {
  check_names(file, group, m);
  for (const auto& [name, a] : m) a.validate(file + ": " + group + "/" + name);
}

void check_data(const std::string& path, const CheckpointData& d) {
  check_arrays(path, "/model", d.model);
  check_arrays(path, "/optim (exp_avg)", d.optim_exp_avg);
  check_arrays(path, "/optim (exp_avg_sq)", d.optim_exp_avg_sq);
  std::map<std::string, int> optim_names;
  for (const auto& kv : d.optim_exp_avg) optim_names[kv.first] = 0;
  for (const auto& kv : d.optim_exp_avg_sq) optim_names[kv.first] = 0;
  check_names(path, "/optim", optim_names);
  check_arrays(path, "/schedules", d.schedules);
  check_arrays(path, "/baselines", d.baselines);
  for (const auto& [name, v] : d.counters)
    if (name.empty() || name.find('/') != std::string::npos)
      throw InputError(path + ": /counters: name \"" + name + "\" is empty or contains '/'");
  for (const auto& [rank, bytes] : d.rng)
    if (rank < 0) throw InputError(path + ": /rng: negative rank " + std::to_string(rank));
}

void write_group(H5File& f, const std::string& group,
                 const std::map<std::string, NamedArray>& arrays) {
  f.create_group(group);
  for (const auto& [name, a] : arrays) f.write_array(group + "/" + name, a);
}

std::map<std::string, NamedArray> read_group(const H5File& f, const std::string& group) {
  std::map<std::string, NamedArray> out;
  for (const std::string& name : f.datasets_under(group))
    out[name] = f.read_array(group + "/" + name);
  return out;
}

void check_version(const H5File& f) {
  if (!f.exists("/meta"))
    throw InputError(f.path() + ": not a placeto checkpoint: group /meta is missing");
  const int64_t v = f.read_int_attr("/meta", "format_version");
  if (v > kCheckpointFormatVersion)
    throw InputError(f.path() + ": /meta format_version " + std::to_string(v) +
                     " is newer than this build reads (" +
                     std::to_string(kCheckpointFormatVersion) + "); use a newer placeto");
  if (v != kCheckpointFormatVersion)
    throw InputError(f.path() + ": /meta format_version " + std::to_string(v) +
                     " is not supported (this build reads version " +
                     std::to_string(kCheckpointFormatVersion) + ")");
}

}  // namespace

bool operator==(const CheckpointData& a, const CheckpointData& b) {
  return a.format_version == b.format_version && a.step == b.step && a.episodes == b.episodes &&
         a.world_size == b.world_size && a.created_utc == b.created_utc &&
         a.git_revision == b.git_revision && a.config_yaml == b.config_yaml && a.model == b.model &&
         a.optim_exp_avg == b.optim_exp_avg && a.optim_exp_avg_sq == b.optim_exp_avg_sq &&
         a.optim_step == b.optim_step && a.schedules == b.schedules && a.baselines == b.baselines &&
         a.rng == b.rng && a.counters == b.counters;
}

void write_checkpoint_hdf5(const std::string& path, const CheckpointData& d) {
  check_data(path, d);
  H5File f = H5File::create(path);
  f.create_group("/meta");
  f.write_int_attr("/meta", "format_version", d.format_version);
  f.write_int_attr("/meta", "step", d.step);
  f.write_int_attr("/meta", "episodes", d.episodes);
  f.write_int_attr("/meta", "world_size", d.world_size);
  f.write_string_attr("/meta", "created_utc", d.created_utc);
  f.write_string_attr("/meta", "git_revision", d.git_revision);
  f.write_string_attr("/meta", "config_yaml", d.config_yaml);
  write_group(f, "/model", d.model);
  f.create_group("/optim");
  f.write_int_attr("/optim", "step", d.optim_step);
  for (const auto& [name, a] : d.optim_exp_avg) f.write_array("/optim/" + name + "/" + kExpAvg, a);
  for (const auto& [name, a] : d.optim_exp_avg_sq)
    f.write_array("/optim/" + name + "/" + kExpAvgSq, a);
  write_group(f, "/schedules", d.schedules);
  write_group(f, "/baselines", d.baselines);
  f.create_group("/rng");
  for (const auto& [rank, bytes] : d.rng)
    f.write_array("/rng/" + std::string(kRankPrefix) + std::to_string(rank),
                  NamedArray::from_u8s({static_cast<int64_t>(bytes.size())},
                                       std::vector<uint8_t>(bytes.begin(), bytes.end())));
  f.create_group("/counters");
  for (const auto& [name, v] : d.counters) f.write_int_attr("/counters", name, v);
  const std::string bytes = f.image();
  f.close();
  // Our own write (temporary, fsync, rename, fsync of the directory): a full disk fails here,
  // with HDF5's state untouched.
  write_file_atomic(path, bytes);
}

void write_checkpoint_file(const std::string& path, const CheckpointData& data) {
  write_checkpoint_hdf5(path, data);
  write_digest_file(path);
}

CheckpointData read_checkpoint_file(const std::string& path) {
  const std::string bytes = read_verified_file(path);
  H5File f = H5File::open_image(path, bytes);
  check_version(f);
  CheckpointData d;
  d.format_version = kCheckpointFormatVersion;
  d.step = f.read_int_attr("/meta", "step");
  d.episodes = f.read_int_attr("/meta", "episodes");
  d.world_size = static_cast<int>(f.read_int_attr("/meta", "world_size"));
  d.created_utc = f.read_string_attr("/meta", "created_utc");
  d.git_revision = f.read_string_attr("/meta", "git_revision");
  d.config_yaml = f.read_string_attr("/meta", "config_yaml");
  d.model = read_group(f, "/model");
  d.optim_step = f.read_int_attr("/optim", "step");
  for (const std::string& name : f.datasets_under("/optim")) {
    const size_t slash = name.rfind('/');
    const std::string param = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string leaf = name.substr(slash == std::string::npos ? 0 : slash + 1);
    if (param.empty() || (leaf != kExpAvg && leaf != kExpAvgSq))
      throw InputError(path + ": /optim/" + name +
                       ": unexpected dataset (expected <param>/exp_avg or <param>/exp_avg_sq)");
    (leaf == kExpAvg ? d.optim_exp_avg : d.optim_exp_avg_sq)[param] =
        f.read_array("/optim/" + name);
  }
  d.schedules = read_group(f, "/schedules");
  d.baselines = read_group(f, "/baselines");
  for (const std::string& name : f.datasets_under("/rng")) {
    const std::string digits = name.substr(std::min(name.size(), std::strlen(kRankPrefix)));
    if (name.rfind(kRankPrefix, 0) != 0 || digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      throw InputError(path + ": /rng/" + name + ": unexpected dataset (expected rank_<r>)");
    const NamedArray a = f.read_array("/rng/" + name);
    if (a.dtype != DType::kU8 || a.shape.size() != 1)
      throw InputError(path + ": /rng/" + name + ": expected a 1-D u8 array, got " +
                       dtype_name(a.dtype) + " " + shape_string(a.shape));
    d.rng[std::stoi(digits)] = std::string(a.bytes.begin(), a.bytes.end());
  }
  for (const std::string& name : f.attr_names("/counters"))
    d.counters[name] = f.read_int_attr("/counters", name);
  f.close();
  return d;
}

std::string utc_timestamp_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace placeto
