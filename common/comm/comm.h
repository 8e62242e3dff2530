// Communicator: the one interface through which ranks exchange data (gradient all-reduce,
// parameter broadcast, small statistics, stop flags).  Backends live in subfolders:
//   mpi/     MPI over a duplicated MPI_COMM_WORLD (CPU nodes; the default)
//   nccl/    NCCL on GPUs, bootstrapped over MPI, loaded at run time with dlopen
//   inproc/  one thread per rank inside one process, for unit tests of the layers above
// Nothing outside common/comm/ includes <mpi.h> or <nccl.h>; use factory.h to get one.
//
// Collective semantics (all backends):
//  * Every rank calls the same collectives in the same order with the same sizes.
//  * all_reduce sums element-wise; kMean then divides the sum by size() on the host, with
//    the same code in every backend, so a 1-rank NCCL run equals a 1-rank MPI run bit for bit.
//  * With CommOptions::deterministic (the default) the MPI and in-process backends add the
//    ranks' contributions in rank order 0, 1, ..., size()-1 for every element, so the result
//    is reproducible run to run for a fixed world size and equals a serial loop over ranks.
//    NCCL sums in its own ring/tree order (reproducible for fixed size and topology).
//
// Errors: a failing library call throws SystemError naming the call and the library's
// message.  A rank that throws out of a collective leaves its peers blocked inside it: the
// caller's top-level handler should call abort() so the whole job ends.
//
// Threading: a Communicator is used by one thread at a time (it keeps scratch buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/enum_names.h"

namespace placeto {

enum class ReduceOp { kSum, kMean };

// The backend a run asks for (the training config's `comm` key): auto, mpi or nccl.
enum class CommBackend { kAuto, kMpi, kNccl };
inline constexpr EnumName<CommBackend> kCommBackendNames[] = {
    {CommBackend::kAuto, "auto"}, {CommBackend::kMpi, "mpi"}, {CommBackend::kNccl, "nccl"}};

// How to pick and run a communication backend (the `comm:` section of a run config).
struct CommOptions {
  // "auto": NCCL when every rank has a distinct GPU, else MPI.  "mpi" or "nccl" force one;
  // "nccl" without a distinct GPU on every rank fails with InputError before training.
  std::string backend = "auto";
  // Fixed rank-order reduction (bit-reproducible).  false: MPI_Allreduce's own algorithm.
  bool deterministic = true;
  // Seconds a collective may wait for its peers before the job is aborted; 0 = wait forever.
  double timeout_s = 0;
};

class Communicator {
 public:
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "mpi", "nccl" or "inproc".
  virtual std::string backend_name() const = 0;

  // In place, element-wise over all ranks.  REQUIRES: the same n on every rank.
  virtual void all_reduce(float* data, size_t n, ReduceOp op) = 0;
  virtual void all_reduce(double* data, size_t n, ReduceOp op) = 0;

  // Copies `bytes` bytes from `root`'s buffer into every other rank's buffer.
  virtual void broadcast(void* data, size_t bytes, int root) = 0;

  // Returns once every rank has entered the barrier.
  virtual void barrier() = 0;

  // Small statistics: on `root` returns size()*n values, rank 0's first; empty elsewhere.
  virtual std::vector<double> gather_doubles(const double* local, size_t n, int root) = 0;

  // Every rank receives every rank's `bytes` bytes; out holds size()*bytes, rank order.
  virtual void all_gather_bytes(const void* local, size_t bytes, void* out) = 0;

  // The largest value over all ranks; used to agree on stop flags and step counts.
  virtual int64_t all_reduce_max(int64_t value) = 0;

  // Ends the whole job: logs `why` and terminates every rank with exit code `code`.  The
  // in-process backend instead throws SystemError on every rank (tests must survive it).
  [[noreturn]] virtual void abort(int code, const std::string& why) = 0;

  // Every rank's string, in rank order (built on all_reduce_max + all_gather_bytes).
  // REQUIRES: no NUL characters in `local`.
  std::vector<std::string> all_gather_strings(const std::string& local);

  // Every rank's vector (all of the same length), concatenated in rank order, on every rank.
  std::vector<double> all_gather_doubles(const std::vector<double>& local);
};

}  // namespace placeto
