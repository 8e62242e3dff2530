#include "common/comm/nccl/cuda_api.h"

#include <memory>

#include "common/error.h"

namespace placeto {
namespace comm_internal {
namespace {

std::unique_ptr<CudaApi> load_cuda(std::string* why) {
  auto api = std::make_unique<CudaApi>();
  if (!api->library.ok()) {
    *why = "libcudart not found (" + api->library.error() + ")";
    return nullptr;
  }
  try {
    const DynamicLibrary& lib = api->library;
    lib.bind(api->GetDeviceCount, "cudaGetDeviceCount");
    lib.bind(api->SetDevice, "cudaSetDevice");
    lib.bind(api->DeviceGetPCIBusId, "cudaDeviceGetPCIBusId");
    lib.bind(api->Malloc, "cudaMalloc");
    lib.bind(api->Free, "cudaFree");
    lib.bind(api->MemcpyAsync, "cudaMemcpyAsync");
    lib.bind(api->StreamCreate, "cudaStreamCreate");
    lib.bind(api->StreamSynchronize, "cudaStreamSynchronize");
    lib.bind(api->StreamDestroy, "cudaStreamDestroy");
    lib.bind(api->GetErrorString, "cudaGetErrorString");
  } catch (const SystemError& e) {
    *why = e.what();
    return nullptr;
  }
  return api;
}

std::unique_ptr<NcclApi> load_nccl(std::string* why) {
  auto api = std::make_unique<NcclApi>();
  if (!api->library.ok()) {
    *why = "libnccl not found (" + api->library.error() + ")";
    return nullptr;
  }
  try {
    const DynamicLibrary& lib = api->library;
    lib.bind(api->GetUniqueId, "ncclGetUniqueId");
    lib.bind(api->CommInitRank, "ncclCommInitRank");
    lib.bind(api->AllReduce, "ncclAllReduce");
    lib.bind(api->Broadcast, "ncclBroadcast");
    lib.bind(api->CommDestroy, "ncclCommDestroy");
    lib.bind(api->CommAbort, "ncclCommAbort");
    lib.bind(api->GetErrorString, "ncclGetErrorString");
  } catch (const SystemError& e) {
    *why = e.what();
    return nullptr;
  }
  return api;
}

// A loaded table, or the reason it could not be loaded; built once per process.
template <typename Api>
struct Loaded {
  std::unique_ptr<Api> api;
  std::string why;
};

}  // namespace

void CudaApi::check(CudaError rc, const char* call) const {
  if (rc == kCudaSuccess) return;
  throw SystemError(std::string("CUDA ") + call + " failed: " + GetErrorString(rc) + " (error " +
                    std::to_string(rc) + ")");
}

void NcclApi::check(NcclResult rc, const char* call) const {
  if (rc == kNcclSuccess) return;
  throw SystemError(std::string("NCCL ") + call + " failed: " + GetErrorString(rc) + " (error " +
                    std::to_string(rc) + ")");
}

const CudaApi* cuda_api(std::string* why) {
  // Intentionally leaked (see the header): unloading CUDA at exit races its threads.
  static Loaded<CudaApi>* loaded = [] {
    auto* l = new Loaded<CudaApi>;
    l->api = load_cuda(&l->why);
    return l;
  }();
  if (!loaded->api) *why = loaded->why;
  return loaded->api.get();
}

const NcclApi* nccl_api(std::string* why) {
  static Loaded<NcclApi>* loaded = [] {
    auto* l = new Loaded<NcclApi>;
    l->api = load_nccl(&l->why);
    return l;
  }();
  if (!loaded->api) *why = loaded->why;
  return loaded->api.get();
}

}  // namespace comm_internal
}  // namespace placeto
