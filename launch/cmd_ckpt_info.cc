// placeto ckpt-info: verify one checkpoint (whole-file digest, every dataset checksum) and
// print its metadata and dataset list as JSON.  A damaged or incompatible file is an error
// (exit 2) with the reason.
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/checkpoint/checkpoint_file.h"
#include "common/checkpoint/file_digest.h"
#include "common/files.h"
#include "common/json_util.h"
#include "launch/commands.h"

namespace placeto {
namespace {

void add_arrays(const std::string& prefix, const std::map<std::string, NamedArray>& arrays,
                const std::string& suffix, Json* out) {
  for (const auto& [name, a] : arrays)
    out->push_back({{"path", prefix + name + suffix},
                    {"dtype", dtype_name(a.dtype)},
                    {"shape", a.shape},
                    {"bytes", a.bytes.size()}});
}

void run_ckpt_info(const std::string& path) {
  const CheckpointData d = read_checkpoint_file(path);
  Json out;
  out["path"] = path;
  out["bytes"] = std::filesystem::file_size(path);
  out["sha256"] = read_file(digest_path(path)).substr(0, 64);
  out["meta"] = {{"format_version", d.format_version},
                 {"step", d.step},
                 {"episodes", d.episodes},
                 {"world_size", d.world_size},
                 {"created_utc", d.created_utc},
                 {"git_revision", d.git_revision},
                 {"config_yaml", d.config_yaml}};
  out["optim_step"] = d.optim_step;
  out["counters"] = Json::object();
  for (const auto& [name, v] : d.counters) out["counters"][name] = v;
  Json datasets = Json::array();
  add_arrays("/model/", d.model, "", &datasets);
  add_arrays("/optim/", d.optim_exp_avg, "/exp_avg", &datasets);
  add_arrays("/optim/", d.optim_exp_avg_sq, "/exp_avg_sq", &datasets);
  add_arrays("/schedules/", d.schedules, "", &datasets);
  add_arrays("/baselines/", d.baselines, "", &datasets);
  for (const auto& [rank, bytes] : d.rng)
    datasets.push_back({{"path", "/rng/rank_" + std::to_string(rank)},
                        {"dtype", "u8"},
                        {"shape", {bytes.size()}},
                        {"bytes", bytes.size()}});
  out["datasets"] = datasets;
  std::cout << out.dump() << std::endl;
}

}  // namespace

void register_ckpt_info_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "ckpt-info", "Verify a checkpoint and print its metadata and datasets as JSON");
  cmd->add_option("checkpoint", *path, "Checkpoint file (ckpt_N.h5, with ckpt_N.h5.sha256)")
      ->required();
  cmd->callback([path] { run_ckpt_info(*path); });
}

}  // namespace placeto
