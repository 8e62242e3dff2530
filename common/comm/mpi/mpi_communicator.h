// MpiCommunicator: the CPU backend, on a private duplicate of MPI_COMM_WORLD (so that our
// collectives never match another library's messages), with MPI_ERRORS_RETURN and every
// return code checked.
//
// Deterministic all-reduce (CommOptions::deterministic, the default): a reduce-scatter
// written as MPI_Alltoallv, where rank p receives every rank's copy of the p-th contiguous
// part of the buffer and adds them in rank order 0..P-1, followed by MPI_Allgatherv of the
// summed parts.  Each element is therefore ((x_0 + x_1) + x_2) + ... exactly, whatever MPI's
// internal algorithms, so results repeat bit for bit for a fixed world size.  Cost: each
// rank sends and receives 2(P-1)/P of the buffer (the same volume as a ring all-reduce) and
// holds one extra part-sized scratch buffer per peer; latency is two collectives instead of
// one.  deterministic=false calls MPI_Allreduce (Open MPI may then pick size-dependent
// algorithms whose rounding differs).
//
// Timeouts (CommOptions::timeout_s > 0): collectives are started non-blocking and polled;
// without one they are the plain blocking calls.  Past the deadline the job is aborted with
// MPI_Abort (a pending collective cannot be cancelled, so throwing would leave MPI writing
// into freed buffers).  Collectives are numbered #1, #2, ... and an ArrivalMonitor
// (arrival_monitor.h) tells rank 0 which ranks reached each one, so the abort names the
// silent ranks: "rank 1 did not reach collective #57 (MPI_Allgather) within 20 s (hung or
// exited)", or, for a rank that arrived and then stopped sending heartbeats, "rank 1 reached
// collective #57 (MPI_Allgather) but went silent inside it".  Rank 0 reports; the other ranks wait
// up to twice the timeout when rank 0 arrived (so rank 0 speaks first) and abort naming rank 0 when
// it did not.
//
// Small buffers (P * n * sizeof(T) <= kSmallReduceBytes) take one MPI_Allgather of the
// whole buffer instead, each rank adding all P copies in the same rank order: one
// collective instead of two where latency dominates, and the same bits as the large path.
//
// Threading: one thread at a time (MPI_THREAD_SERIALIZED).
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "common/comm/comm.h"
#include "common/comm/mpi/arrival_monitor.h"
#include "common/comm/mpi/mpi_check.h"

namespace placeto {

class MpiRuntime;

class MpiCommunicator : public Communicator {
 public:
  // Up to this many bytes received per rank (P * n * sizeof(T)) the deterministic
  // all-reduce all-gathers.
  static constexpr size_t kSmallReduceBytes = 64 * 1024;

  MpiCommunicator(MpiRuntime& runtime, const CommOptions& options);
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backend_name() const override { return "mpi"; }
  void all_reduce(float* data, size_t n, ReduceOp op) override;
  void all_reduce(double* data, size_t n, ReduceOp op) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override;
  std::vector<double> gather_doubles(const double* local, size_t n, int root) override;
  void all_gather_bytes(const void* local, size_t bytes, void* out) override;
  int64_t all_reduce_max(int64_t value) override;
  [[noreturn]] void abort(int code, const std::string& why) override;

 private:
  template <typename T>
  void all_reduce_impl(T* data, size_t n, ReduceOp op, MPI_Datatype type);
  template <typename T>
  void all_reduce_fixed_order(T* data, size_t n, MPI_Datatype type);
  template <typename T>
  void all_reduce_by_all_gather(T* data, size_t n, MPI_Datatype type);
  // Runs one collective: the blocking call when there is no timeout (Open MPI's blocking
  // algorithms are its tuned ones), else the non-blocking twin, polled until the deadline.
  template <typename Blocking, typename Start, typename... Args>
  void collective(const char* what, Blocking blocking, Start start, Args... args) {
    if (options_.timeout_s <= 0) {
      comm_internal::mpi_check(blocking(args...), what);
      return;
    }
    ++collectives_;
    if (monitor_) monitor_->arrive(collectives_);
    MPI_Request request = MPI_REQUEST_NULL;
    comm_internal::mpi_check(start(args..., &request), what);
    wait(&request, what);
  }
  // Completes `request` or aborts the job past the timeout; `what` names the collective.
  void wait(MPI_Request* request, const char* what);
  // The abort message for collective #collectives_ when the ranks in `missing` (those this
  // rank watches) did not report reaching it.
  std::string timeout_message(const char* what, const std::vector<int>& missing,
                              double waited_s) const;

  MpiRuntime& runtime_;
  CommOptions options_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  std::vector<unsigned char> scratch_;
  // With a timeout: collectives started so far, and who reached them (several ranks only).
  int64_t collectives_ = 0;
  std::unique_ptr<comm_internal::ArrivalMonitor> monitor_;
};

}  // namespace placeto
