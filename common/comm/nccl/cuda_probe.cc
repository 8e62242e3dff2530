#include "common/comm/nccl/cuda_probe.h"

#include "common/comm/nccl/cuda_api.h"

namespace placeto {

GpuIdentity CudaDeviceProbe::probe(int local_rank) const {
  using comm_internal::CudaApi;
  using comm_internal::CudaError;
  using comm_internal::kCudaSuccess;
  GpuIdentity out;
  const CudaApi* cuda = comm_internal::cuda_api(&out.why_none);
  if (cuda == nullptr) return out;
  int count = 0;
  const CudaError rc = cuda->GetDeviceCount(&count);
  if (rc != kCudaSuccess) {
    out.why_none = std::string("cudaGetDeviceCount: ") + cuda->GetErrorString(rc) + " (error " +
                   std::to_string(rc) + ")";
    return out;
  }
  if (count <= 0) {
    out.why_none = "cudaGetDeviceCount reports 0 devices";
    return out;
  }
  const int device = local_rank % count;
  char bus_id[64] = {0};
  const CudaError bus_rc = cuda->DeviceGetPCIBusId(bus_id, sizeof(bus_id), device);
  if (bus_rc != kCudaSuccess) {
    out.why_none = std::string("cudaDeviceGetPCIBusId: ") + cuda->GetErrorString(bus_rc);
    return out;
  }
  out.id = host_ + "/" + bus_id;
  out.device = device;
  return out;
}

}  // namespace placeto
