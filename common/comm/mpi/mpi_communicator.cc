#include "common/comm/mpi/mpi_communicator.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/comm/mpi/mpi_check.h"
#include "common/comm/mpi/mpi_runtime.h"
#include "common/comm/reduce_order.h"
#include "common/error.h"
#include "common/logging.h"

namespace placeto {

using comm_internal::mpi_check;

namespace {

// MPI counts are int: larger buffers are refused with a clear message rather than wrapped.
int to_count(size_t n, const char* what) {
  if (n > static_cast<size_t>(INT_MAX)) {
    throw SystemError(std::string(what) + ": " + std::to_string(n) +
                      " elements exceed MPI's int count limit");
  }
  return static_cast<int>(n);
}

}  // namespace

MpiCommunicator::MpiCommunicator(MpiRuntime& runtime, const CommOptions& options)
    : runtime_(runtime), options_(options) {
  mpi_check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  runtime_.communicator_created();
  mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  if (options_.timeout_s > 0 && size_ > 1)
    monitor_ = std::make_unique<comm_internal::ArrivalMonitor>(comm_, rank_, size_,
                                                               options_.timeout_s / 5);
}

MpiCommunicator::~MpiCommunicator() {
  monitor_.reset();
  const int rc = MPI_Comm_free(&comm_);
  if (rc != MPI_SUCCESS) spdlog::error("MPI_Comm_free failed with code {}", rc);
  runtime_.communicator_destroyed();
}

void MpiCommunicator::wait(MPI_Request* request, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  auto limit = std::chrono::duration<double>(options_.timeout_s);
  bool extended = false;
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    int done = 0;
    mpi_check(MPI_Test(request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (monitor_) monitor_->poll(collectives_);
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > limit) {
      const std::vector<int> missing =
          monitor_ ? monitor_->missing(collectives_) : std::vector<int>{};
      // Rank 0 sees every rank's arrival: when it arrived, let it be the one to report.
      if (monitor_ && rank_ != 0 && missing.empty() && !extended) {
        extended = true;
        limit *= 2;
        continue;
      }
      abort(3, timeout_message(what, missing, std::chrono::duration<double>(waited).count()));
    }
    // Back off to at most 1 ms so that an idle wait does not steal a core from a peer.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

std::string MpiCommunicator::timeout_message(const char* what, const std::vector<int>& missing,
                                             double waited_s) const {
  char seconds[32], limit[96];
  std::snprintf(seconds, sizeof seconds, "%.3g s", waited_s);
  std::snprintf(limit, sizeof limit, " (timeout %g s: comm.timeout_s, collective_timeout_s)",
                options_.timeout_s);
  const std::string collective = "collective #" + std::to_string(collectives_) + " (" + what + ")";
  if (!missing.empty()) {
    return comm_internal::describe_ranks(missing) + " did not reach " + collective + " within " +
           seconds + " (hung or exited); rank " + std::to_string(rank_) + " waited for it" + limit;
  }
  // Arrived, but no heartbeat for half the timeout while its peers wait: stopped inside.
  const std::vector<int> quiet =
      monitor_ ? monitor_->quiet_for(options_.timeout_s / 2) : std::vector<int>{};
  if (rank_ == 0 && !quiet.empty()) {
    return comm_internal::describe_ranks(quiet) + " reached " + collective +
           " but went silent inside it (no heartbeat for more than half the timeout; hung or "
           "stopped); rank 0 waited " +
           seconds + limit;
  }
  if (monitor_ && rank_ == 0) {
    return "every rank reached " + collective + " but it did not complete within " + seconds +
           ": a rank stopped or died inside it" + limit;
  }
  return std::string(what) + " on rank " + std::to_string(rank_) + " waited " + seconds +
         " for its peers in " + collective + "; rank 0 reached it but did not report" + limit;
}

template <typename T>
void MpiCommunicator::all_reduce_fixed_order(T* data, size_t n, MPI_Datatype type) {
  using comm_internal::part_begin;
  using comm_internal::part_size;
  const size_t mine = part_size(n, size_, rank_);
  // Receive every rank's copy of our part, rank r's at r * mine.
  scratch_.resize(mine * static_cast<size_t>(size_) * sizeof(T));
  T* received = reinterpret_cast<T*>(scratch_.data());
  std::vector<int> send_counts(size_), send_displs(size_), recv_counts(size_), recv_displs(size_);
  for (int r = 0; r < size_; ++r) {
    send_counts[r] = to_count(part_size(n, size_, r), "all_reduce");
    send_displs[r] = to_count(part_begin(n, size_, r), "all_reduce");
    recv_counts[r] = to_count(mine, "all_reduce");
    recv_displs[r] = to_count(mine * static_cast<size_t>(r), "all_reduce");
  }
  collective("MPI_Alltoallv", MPI_Alltoallv, MPI_Ialltoallv, data, send_counts.data(),
             send_displs.data(), type, received, recv_counts.data(), recv_displs.data(), type,
             comm_);

  std::vector<const T*> inputs(size_);
  for (int r = 0; r < size_; ++r) inputs[r] = received + mine * static_cast<size_t>(r);
  comm_internal::sum_in_rank_order(inputs.data(), size_, mine, data + part_begin(n, size_, rank_));

  collective("MPI_Allgatherv", MPI_Allgatherv, MPI_Iallgatherv, MPI_IN_PLACE, 0, type, data,
             send_counts.data(), send_displs.data(), type, comm_);
}

template <typename T>
void MpiCommunicator::all_reduce_by_all_gather(T* data, size_t n, MPI_Datatype type) {
  scratch_.resize(n * static_cast<size_t>(size_) * sizeof(T));
  T* all = reinterpret_cast<T*>(scratch_.data());
  collective("MPI_Allgather", MPI_Allgather, MPI_Iallgather, data, to_count(n, "all_reduce"), type,
             all, to_count(n, "all_reduce"), type, comm_);
  std::vector<const T*> inputs(size_);
  for (int r = 0; r < size_; ++r) inputs[r] = all + n * static_cast<size_t>(r);
  comm_internal::sum_in_rank_order(inputs.data(), size_, n, data);
}

template <typename T>
void MpiCommunicator::all_reduce_impl(T* data, size_t n, ReduceOp op, MPI_Datatype type) {
  // One rank: the sum and the mean are the data itself.
  if (n == 0 || size_ == 1) return;
  if (options_.deterministic && n * sizeof(T) * static_cast<size_t>(size_) <= kSmallReduceBytes) {
    all_reduce_by_all_gather(data, n, type);
  } else if (options_.deterministic) {
    all_reduce_fixed_order(data, n, type);
  } else {
    collective("MPI_Allreduce", MPI_Allreduce, MPI_Iallreduce, MPI_IN_PLACE, data,
               to_count(n, "all_reduce"), type, MPI_SUM, comm_);
  }
  if (op == ReduceOp::kMean) comm_internal::divide_by_ranks(data, n, size_);
}

void MpiCommunicator::all_reduce(float* data, size_t n, ReduceOp op) {
  all_reduce_impl(data, n, op, MPI_FLOAT);
}

void MpiCommunicator::all_reduce(double* data, size_t n, ReduceOp op) {
  all_reduce_impl(data, n, op, MPI_DOUBLE);
}

void MpiCommunicator::broadcast(void* data, size_t bytes, int root) {
  PLACETO_CHECK(root >= 0 && root < size_);
  // In slices below MPI's int count limit.
  constexpr size_t kSlice = size_t{1} << 30;
  for (size_t offset = 0; offset < bytes; offset += kSlice) {
    const size_t length = std::min(kSlice, bytes - offset);
    collective("MPI_Bcast", MPI_Bcast, MPI_Ibcast, static_cast<unsigned char*>(data) + offset,
               static_cast<int>(length), MPI_BYTE, root, comm_);
  }
}

void MpiCommunicator::barrier() { collective("MPI_Barrier", MPI_Barrier, MPI_Ibarrier, comm_); }

std::vector<double> MpiCommunicator::gather_doubles(const double* local, size_t n, int root) {
  PLACETO_CHECK(root >= 0 && root < size_);
  std::vector<double> out(rank_ == root ? n * static_cast<size_t>(size_) : 0);
  collective("MPI_Gather", MPI_Gather, MPI_Igather, local, to_count(n, "gather_doubles"),
             MPI_DOUBLE, out.data(), to_count(n, "gather_doubles"), MPI_DOUBLE, root, comm_);
  return out;
}

void MpiCommunicator::all_gather_bytes(const void* local, size_t bytes, void* out) {
  collective("MPI_Allgather", MPI_Allgather, MPI_Iallgather, local,
             to_count(bytes, "all_gather_bytes"), MPI_BYTE, out,
             to_count(bytes, "all_gather_bytes"), MPI_BYTE, comm_);
}

int64_t MpiCommunicator::all_reduce_max(int64_t value) {
  int64_t result = value;
  collective("MPI_Allreduce(max)", MPI_Allreduce, MPI_Iallreduce, &value, &result, 1, MPI_INT64_T,
             MPI_MAX, comm_);
  return result;
}

void MpiCommunicator::abort(int code, const std::string& why) {
  spdlog::critical("rank {} aborting the job (exit code {}): {}", rank_, code, why);
  spdlog::default_logger()->flush();
  MPI_Abort(comm_, code);
  // MPI_Abort does not return on a working MPI; if it does, still end this process.
  std::_Exit(code);
}

}  // namespace placeto
