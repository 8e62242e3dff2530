// CudaDeviceProbe: the real DeviceProbe.  Loads the CUDA runtime with dlopen and reports
// the GPU a rank would drive (device local_rank % device_count) as "<host>/<PCI bus id>",
// which is unique across the job even when CUDA_VISIBLE_DEVICES renumbers devices per rank.
// No library, no driver (cudaErrorInsufficientDriver, as on CPU-only nodes) and no device
// all count as "no GPU", with the reason kept for the log and for `comm: nccl` errors.
//
// Threading: probe() may be called from any thread.
#pragma once

#include <string>

#include "common/comm/backend_choice.h"

namespace placeto {

class CudaDeviceProbe : public DeviceProbe {
 public:
  // `host`: this rank's host name (MpiRuntime::host_name()), prefixed to the bus id.
  explicit CudaDeviceProbe(std::string host) : host_(std::move(host)) {}
  GpuIdentity probe(int local_rank) const override;

 private:
  std::string host_;
};

}  // namespace placeto
