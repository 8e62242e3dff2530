// The few CUDA-runtime and NCCL entry points the NCCL backend uses, resolved with dlopen.
// The types are declared here rather than taken from cuda_runtime.h / nccl.h so that the
// backend builds on machines without the CUDA toolkit; abi_check.cc checks them
// against the real headers where those exist.  Internal to common/comm/.
//
// Threading: the tables are loaded once (thread-safe static initialization) and immutable
// afterwards.  They are never unloaded: CUDA and NCCL keep threads that must not outlive
// their code, and the process's exit releases them anyway.
#pragma once

#include <cstddef>
#include <string>

#include "common/comm/nccl/dynamic_library.h"

namespace placeto {
namespace comm_internal {

// ---- CUDA runtime (cuda_runtime_api.h, driver_types.h) ----
using CudaError = int;     // cudaError_t
using CudaStream = void*;  // cudaStream_t
constexpr CudaError kCudaSuccess = 0;
constexpr CudaError kCudaErrorInsufficientDriver = 35;
constexpr CudaError kCudaErrorNoDevice = 100;
constexpr int kCudaMemcpyHostToDevice = 1;
constexpr int kCudaMemcpyDeviceToHost = 2;

struct CudaApi {
  DynamicLibrary library{cuda_library_candidates(
      "PLACETO_CUDART_LIBRARY",
      {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"})};
  CudaError (*GetDeviceCount)(int*) = nullptr;
  CudaError (*SetDevice)(int) = nullptr;
  CudaError (*DeviceGetPCIBusId)(char*, int, int) = nullptr;
  CudaError (*Malloc)(void**, size_t) = nullptr;
  CudaError (*Free)(void*) = nullptr;
  CudaError (*MemcpyAsync)(void*, const void*, size_t, int, CudaStream) = nullptr;
  CudaError (*StreamCreate)(CudaStream*) = nullptr;
  CudaError (*StreamSynchronize)(CudaStream) = nullptr;
  CudaError (*StreamDestroy)(CudaStream) = nullptr;
  const char* (*GetErrorString)(CudaError) = nullptr;

  // Throws SystemError("CUDA <call> failed: <message> (error N)") unless rc is success.
  void check(CudaError rc, const char* call) const;
};

// The loaded runtime, or nullptr with *why set ("libcudart not found: ...").
const CudaApi* cuda_api(std::string* why);

// ---- NCCL (nccl.h) ----
using NcclResult = int;                   // ncclResult_t
using NcclComm = struct NcclCommOpaque*;  // ncclComm_t
constexpr size_t kNcclUniqueIdBytes = 128;
struct NcclUniqueId {
  char internal[kNcclUniqueIdBytes];
};
constexpr NcclResult kNcclSuccess = 0;
constexpr int kNcclUint8 = 1;  // ncclDataType_t
constexpr int kNcclFloat32 = 7;
constexpr int kNcclFloat64 = 8;
constexpr int kNcclSum = 0;  // ncclRedOp_t

struct NcclApi {
  DynamicLibrary library{
      cuda_library_candidates("PLACETO_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"})};
  NcclResult (*GetUniqueId)(NcclUniqueId*) = nullptr;
  NcclResult (*CommInitRank)(NcclComm*, int, NcclUniqueId, int) = nullptr;
  NcclResult (*AllReduce)(const void*, void*, size_t, int, int, NcclComm, CudaStream) = nullptr;
  NcclResult (*Broadcast)(const void*, void*, size_t, int, int, NcclComm, CudaStream) = nullptr;
  NcclResult (*CommDestroy)(NcclComm) = nullptr;
  NcclResult (*CommAbort)(NcclComm) = nullptr;
  const char* (*GetErrorString)(NcclResult) = nullptr;

  void check(NcclResult rc, const char* call) const;
};

// The loaded NCCL, or nullptr with *why set.
const NcclApi* nccl_api(std::string* why);

}  // namespace comm_internal
}  // namespace placeto
