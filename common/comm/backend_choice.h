// Choosing a communication backend: NCCL needs every rank to drive its own GPU (NCCL
// refuses two ranks on one device), so `auto` takes NCCL only when every rank reports a
// GPU and no two ranks report the same one.  The choice is a pure function of what each
// rank's DeviceProbe saw, so every rank reaches the same decision from the same gathered
// list, and tests exercise it with a fake probe and no MPI.
//
// Threading: choose_backend is pure; a DeviceProbe must be callable from any one thread.
#pragma once

#include <string>
#include <vector>

namespace placeto {

class Communicator;

// What one rank found: the GPU it would use, or why it has none.
struct GpuIdentity {
  // Globally unique name of the device ("<host>/<PCI bus id>"); "" = no usable GPU.
  std::string id;
  // CUDA device index to select on this rank (meaningful only when id is set).
  int device = -1;
  // Why there is no GPU ("libcudart not found", "CUDA driver version is insufficient...").
  std::string why_none;
};

// Finds the GPU a rank would use.  The real one (CudaDeviceProbe, nccl/cuda_probe.h) asks
// the CUDA runtime loaded with dlopen; tests substitute fakes.
class DeviceProbe {
 public:
  virtual ~DeviceProbe() = default;
  // `local_rank`: this rank's index among the ranks on its host (picks device
  // local_rank % device_count).
  virtual GpuIdentity probe(int local_rank) const = 0;
};

struct BackendChoice {
  std::string backend;  // "mpi" or "nccl"
  std::string reason;   // one line for the log: why this backend
};

// "" when `name` is a backend CommOptions::backend accepts, else why not (with "did you
// mean").
std::string backend_name_problem(const std::string& name);

// REQUIRES: gpus has one entry per rank, in rank order.
// Throws InputError (field "comm") for an unknown backend name, and for "nccl" when some
// rank has no GPU or two ranks share one, naming the rank and the reason.
BackendChoice choose_backend(const std::string& requested, const std::vector<GpuIdentity>& gpus);

// Probes this rank's GPU and gathers every rank's answer, in rank order, over `comm`.
// Collective: every rank of `comm` must call it.
std::vector<GpuIdentity> gather_gpu_identities(Communicator& comm, const DeviceProbe& probe,
                                               int local_rank);

}  // namespace placeto
