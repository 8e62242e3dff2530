// The trainer's Collective over a common/comm Communicator (MPI or NCCL): deterministic
// all-reduce for gradients, all-gather of small per-episode statistics.
#pragma once

#include <chrono>

#include "common/comm/comm.h"
#include "learner/collective.h"

namespace placeto {

class CommCollective : public Collective {
 public:
  explicit CommCollective(Communicator& comm) : comm_(comm) {}
  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  void all_reduce_mean(float* data, size_t n) override {
    auto t0 = std::chrono::steady_clock::now();
    comm_.all_reduce(data, n, ReduceOp::kMean);
    reduce_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::vector<double> all_gather(const std::vector<double>& local) override {
    std::vector<double> out(local.size() * static_cast<size_t>(comm_.size()));
    comm_.all_gather_bytes(local.data(), local.size() * sizeof(double), out.data());
    return out;
  }
  double reduce_seconds() const override { return reduce_s_; }

 private:
  Communicator& comm_;
  double reduce_s_ = 0;
};

}  // namespace placeto
