#include "common/comm/backend_choice.h"

#include <map>

#include "common/comm/comm.h"
#include "common/error.h"

namespace placeto {
namespace {

const char* const kBackends[] = {"auto", "mpi", "nccl"};

// The first reason NCCL cannot run on these ranks, or "" when it can.
std::string why_not_nccl(const std::vector<GpuIdentity>& gpus) {
  std::map<std::string, size_t> first_rank_of;
  for (size_t r = 0; r < gpus.size(); ++r) {
    if (gpus[r].id.empty()) {
      return "rank " + std::to_string(r) + " has no usable GPU (" +
             (gpus[r].why_none.empty() ? std::string("no reason given") : gpus[r].why_none) + ")";
    }
    auto inserted = first_rank_of.emplace(gpus[r].id, r);
    if (!inserted.second) {
      return "ranks " + std::to_string(inserted.first->second) + " and " + std::to_string(r) +
             " share GPU " + gpus[r].id + " (NCCL needs one GPU per rank)";
    }
  }
  return "";
}

}  // namespace

std::string backend_name_problem(const std::string& name) {
  for (const char* known : kBackends) {
    if (name == known) return "";
  }
  const std::string suggestion = did_you_mean(name, {"auto", "mpi", "nccl"});
  return "unknown backend '" + name + "'" +
         (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
         "; choose auto, mpi or nccl";
}

BackendChoice choose_backend(const std::string& requested, const std::vector<GpuIdentity>& gpus) {
  PLACETO_CHECK(!gpus.empty());
  const std::string problem = backend_name_problem(requested);
  if (!problem.empty()) throw_input_error("", "comm", problem);
  if (requested == "mpi") return {"mpi", "requested"};
  const std::string blocker = why_not_nccl(gpus);
  if (requested == "nccl") {
    if (!blocker.empty()) {
      throw_input_error("", "comm",
                        "backend 'nccl' requested but " + blocker +
                            "; use 'mpi' or 'auto' on nodes without one GPU per rank");
    }
    return {"nccl", "requested; every rank has its own GPU"};
  }
  if (blocker.empty()) return {"nccl", "auto: every rank has its own GPU"};
  return {"mpi", "auto: " + blocker};
}

std::vector<GpuIdentity> gather_gpu_identities(Communicator& comm, const DeviceProbe& probe,
                                               int local_rank) {
  const GpuIdentity mine = probe.probe(local_rank);
  const std::vector<std::string> ids = comm.all_gather_strings(mine.id);
  const std::vector<std::string> whys = comm.all_gather_strings(mine.why_none);
  std::vector<GpuIdentity> all(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    all[r].id = ids[r];
    all[r].why_none = whys[r];
    // Other ranks' device indices are theirs to use; only ours is kept.
    all[r].device = static_cast<int>(r) == comm.rank() ? mine.device : -1;
  }
  return all;
}

}  // namespace placeto
