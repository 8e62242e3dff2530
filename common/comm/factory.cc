#include "common/comm/factory.h"

#include "common/comm/mpi/mpi_communicator.h"
#include "common/comm/nccl/cuda_probe.h"
#include "common/comm/nccl/nccl_communicator.h"
#include "common/error.h"
#include "common/logging.h"

namespace placeto {

std::unique_ptr<Communicator> make_communicator(const CommOptions& options, MpiRuntime& mpi) {
  return make_communicator(options, mpi, CudaDeviceProbe(mpi.host_name()));
}

std::unique_ptr<Communicator> make_communicator(const CommOptions& options, MpiRuntime& mpi,
                                                const DeviceProbe& probe) {
  auto comm = std::make_unique<MpiCommunicator>(mpi, options);
  if (options.backend == "mpi") return comm;
  // Every rank reaches the same choice from the same list (or the same InputError).
  const std::vector<GpuIdentity> gpus = gather_gpu_identities(*comm, probe, mpi.local_rank());
  const BackendChoice choice = choose_backend(options.backend, gpus);
  if (comm->rank() == 0) {
    spdlog::info("communication backend: {} ({})", choice.backend, choice.reason);
  }
  if (choice.backend == "mpi") return comm;
  const int device = gpus[static_cast<size_t>(comm->rank())].device;
  return std::make_unique<NcclCommunicator>(std::move(comm), device);
}

}  // namespace placeto
