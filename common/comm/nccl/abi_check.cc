// Compile-time check that the NCCL and CUDA-runtime types declared by hand in cuda_api.h
// match the real headers.  CMake compiles this file only where nccl.h and
// cuda_runtime_api.h are installed; elsewhere the hand-written declarations stand alone.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <type_traits>
#include <utility>

#include "common/comm/nccl/cuda_api.h"

namespace placeto {
namespace comm_internal {

static_assert(kCudaSuccess == cudaSuccess);
static_assert(kCudaErrorInsufficientDriver == cudaErrorInsufficientDriver);
static_assert(kCudaErrorNoDevice == cudaErrorNoDevice);
static_assert(kCudaMemcpyHostToDevice == cudaMemcpyHostToDevice);
static_assert(kCudaMemcpyDeviceToHost == cudaMemcpyDeviceToHost);
static_assert(sizeof(CudaError) == sizeof(cudaError_t));
static_assert(sizeof(CudaStream) == sizeof(cudaStream_t));

static_assert(kNcclSuccess == ncclSuccess);
static_assert(kNcclUint8 == ncclUint8);
static_assert(kNcclFloat32 == ncclFloat32);
static_assert(kNcclFloat64 == ncclFloat64);
static_assert(kNcclSum == ncclSum);
static_assert(sizeof(NcclUniqueId) == sizeof(ncclUniqueId));
static_assert(kNcclUniqueIdBytes == NCCL_UNIQUE_ID_BYTES);
static_assert(sizeof(NcclResult) == sizeof(ncclResult_t));
static_assert(sizeof(int) == sizeof(ncclDataType_t));
static_assert(sizeof(int) == sizeof(ncclRedOp_t));
static_assert(sizeof(NcclComm) == sizeof(ncclComm_t));

// The real functions accept the argument types we pass (cudaError_t and the NCCL enums are
// int-sized enums, so our int-returning pointers are ABI-compatible).
static_assert(
    std::is_same_v<decltype(cudaDeviceGetPCIBusId(std::declval<char*>(), 0, 0)), cudaError_t>);
static_assert(std::is_same_v<decltype(ncclCommInitRank(std::declval<ncclComm_t*>(), 0,
                                                       std::declval<ncclUniqueId>(), 0)),
                             ncclResult_t>);
static_assert(sizeof(cudaError_t) == sizeof(int) && sizeof(ncclResult_t) == sizeof(int));

}  // namespace comm_internal
}  // namespace placeto
