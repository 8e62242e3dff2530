#include "common/comm/nccl/nccl_communicator.h"

#include <cstdlib>

#include "common/comm/reduce_order.h"
#include "common/error.h"
#include "common/logging.h"

namespace placeto {

using comm_internal::cuda_api;
using comm_internal::divide_by_ranks;
using comm_internal::kCudaMemcpyDeviceToHost;
using comm_internal::kCudaMemcpyHostToDevice;
using comm_internal::kCudaSuccess;
using comm_internal::kNcclFloat32;
using comm_internal::kNcclFloat64;
using comm_internal::kNcclSuccess;
using comm_internal::kNcclSum;
using comm_internal::kNcclUint8;
using comm_internal::nccl_api;
using comm_internal::NcclUniqueId;

NcclCommunicator::NcclCommunicator(std::unique_ptr<Communicator> bootstrap, int device)
    : bootstrap_(std::move(bootstrap)) {
  std::string why;
  cuda_ = cuda_api(&why);
  if (cuda_ == nullptr) throw SystemError("NCCL backend: " + why);
  nccl_ = nccl_api(&why);
  if (nccl_ == nullptr) throw SystemError("NCCL backend: " + why);
  cuda_->check(cuda_->SetDevice(device), "cudaSetDevice");
  NcclUniqueId id{};
  if (rank() == 0) nccl_->check(nccl_->GetUniqueId(&id), "ncclGetUniqueId");
  bootstrap_->broadcast(&id, sizeof(id), 0);
  nccl_->check(nccl_->CommInitRank(&comm_, size(), id, rank()), "ncclCommInitRank");
  try {
    cuda_->check(cuda_->StreamCreate(&stream_), "cudaStreamCreate");
  } catch (...) {
    // The destructor does not run for a half-built object: release the communicator here.
    nccl_->CommDestroy(comm_);
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  // Destructors must not throw: failures here are logged.
  if (device_buffer_ != nullptr && cuda_->Free(device_buffer_) != kCudaSuccess) {
    spdlog::error("cudaFree of the NCCL staging buffer failed");
  }
  if (stream_ != nullptr && cuda_->StreamDestroy(stream_) != kCudaSuccess) {
    spdlog::error("cudaStreamDestroy failed");
  }
  if (comm_ != nullptr && nccl_->CommDestroy(comm_) != kNcclSuccess) {
    spdlog::error("ncclCommDestroy failed");
  }
}

void NcclCommunicator::reserve_device(size_t bytes) {
  if (bytes <= device_bytes_) return;
  if (device_buffer_ != nullptr) {
    cuda_->check(cuda_->Free(device_buffer_), "cudaFree");
    device_buffer_ = nullptr;
    device_bytes_ = 0;
  }
  cuda_->check(cuda_->Malloc(&device_buffer_, bytes), "cudaMalloc");
  device_bytes_ = bytes;
}

template <typename T>
void NcclCommunicator::all_reduce_impl(T* data, size_t n, ReduceOp op, int nccl_type) {
  if (n == 0) return;
  const size_t bytes = n * sizeof(T);
  reserve_device(bytes);
  cuda_->check(cuda_->MemcpyAsync(device_buffer_, data, bytes, kCudaMemcpyHostToDevice, stream_),
               "cudaMemcpyAsync(host to device)");
  nccl_->check(
      nccl_->AllReduce(device_buffer_, device_buffer_, n, nccl_type, kNcclSum, comm_, stream_),
      "ncclAllReduce");
  cuda_->check(cuda_->MemcpyAsync(data, device_buffer_, bytes, kCudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync(device to host)");
  cuda_->check(cuda_->StreamSynchronize(stream_), "cudaStreamSynchronize");
  if (op == ReduceOp::kMean) divide_by_ranks(data, n, size());
}

void NcclCommunicator::all_reduce(float* data, size_t n, ReduceOp op) {
  all_reduce_impl(data, n, op, kNcclFloat32);
}

void NcclCommunicator::all_reduce(double* data, size_t n, ReduceOp op) {
  all_reduce_impl(data, n, op, kNcclFloat64);
}

void NcclCommunicator::broadcast(void* data, size_t bytes, int root) {
  PLACETO_CHECK(root >= 0 && root < size());
  if (bytes == 0) return;
  reserve_device(bytes);
  if (rank() == root) {
    cuda_->check(cuda_->MemcpyAsync(device_buffer_, data, bytes, kCudaMemcpyHostToDevice, stream_),
                 "cudaMemcpyAsync(host to device)");
  }
  nccl_->check(
      nccl_->Broadcast(device_buffer_, device_buffer_, bytes, kNcclUint8, root, comm_, stream_),
      "ncclBroadcast");
  if (rank() != root) {
    cuda_->check(cuda_->MemcpyAsync(data, device_buffer_, bytes, kCudaMemcpyDeviceToHost, stream_),
                 "cudaMemcpyAsync(device to host)");
  }
  cuda_->check(cuda_->StreamSynchronize(stream_), "cudaStreamSynchronize");
}

void NcclCommunicator::abort(int code, const std::string& why) {
  // Tear NCCL down first so that its proxy threads do not keep peers waiting.
  if (comm_ != nullptr && nccl_->CommAbort(comm_) != kNcclSuccess) {
    spdlog::error("ncclCommAbort failed");
  }
  comm_ = nullptr;
  bootstrap_->abort(code, why);
  // [[noreturn]] is not part of the virtual call's type; the bootstrap never returns.
  std::abort();
}

}  // namespace placeto
