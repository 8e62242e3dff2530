// NcclCommunicator: the GPU backend.  The learner's tensors live on the host (LibTorch here
// is CPU-only), so each all-reduce stages the buffer into a device buffer, runs
// ncclAllReduce(sum) on a private stream, copies the result back and, for kMean, divides on
// the host with the same code as the other backends (a 1-rank NCCL run equals a 1-rank MPI
// run bit for bit).  NCCL is bootstrapped over MPI: rank 0's ncclUniqueId is broadcast on
// the bootstrap communicator, which also serves barrier, gather and the small-integer
// reductions (no point staging a few bytes through a GPU).
//
// Determinism: NCCL's sum order is its own (ring/tree by size and topology); it repeats for
// a fixed world size, topology and NCCL version, but differs from the MPI backend's
// rank-order sum for more than one rank.
//
// Threading: one thread at a time; it owns the CUDA device it selected.
#pragma once

#include <memory>

#include "common/comm/comm.h"
#include "common/comm/nccl/cuda_api.h"

namespace placeto {

class NcclCommunicator : public Communicator {
 public:
  // `bootstrap`: an MPI communicator over the same ranks (kept for the small collectives).
  // `device`: the CUDA device this rank drives.  Collective over bootstrap's ranks.
  // Throws SystemError when libcudart/libnccl cannot be loaded or a call fails.
  NcclCommunicator(std::unique_ptr<Communicator> bootstrap, int device);
  ~NcclCommunicator() override;

  int rank() const override { return bootstrap_->rank(); }
  int size() const override { return bootstrap_->size(); }
  std::string backend_name() const override { return "nccl"; }
  void all_reduce(float* data, size_t n, ReduceOp op) override;
  void all_reduce(double* data, size_t n, ReduceOp op) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override { bootstrap_->barrier(); }
  std::vector<double> gather_doubles(const double* local, size_t n, int root) override {
    return bootstrap_->gather_doubles(local, n, root);
  }
  void all_gather_bytes(const void* local, size_t bytes, void* out) override {
    bootstrap_->all_gather_bytes(local, bytes, out);
  }
  int64_t all_reduce_max(int64_t value) override { return bootstrap_->all_reduce_max(value); }
  [[noreturn]] void abort(int code, const std::string& why) override;

 private:
  template <typename T>
  void all_reduce_impl(T* data, size_t n, ReduceOp op, int nccl_type);
  // Grows the device staging buffer to at least `bytes`.
  void reserve_device(size_t bytes);

  std::unique_ptr<Communicator> bootstrap_;
  const comm_internal::CudaApi* cuda_ = nullptr;
  const comm_internal::NcclApi* nccl_ = nullptr;
  comm_internal::NcclComm comm_ = nullptr;
  comm_internal::CudaStream stream_ = nullptr;
  void* device_buffer_ = nullptr;
  size_t device_bytes_ = 0;
};

}  // namespace placeto
