#include "common/comm/mpi/arrival_monitor.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/comm/mpi/mpi_check.h"
#include "common/logging.h"

namespace placeto {
namespace comm_internal {

namespace {

constexpr int kArrivalTag = 7;
// How long the destructor lets this rank's last notices drain before giving up on them.
constexpr auto kSendDrain = std::chrono::seconds(2);

}  // namespace

std::string describe_ranks(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

ArrivalMonitor::ArrivalMonitor(MPI_Comm comm, int rank, int size, double heartbeat_s)
    : heartbeat_(heartbeat_s) {
  mpi_check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup(arrivals)");
  mpi_check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  if (rank == 0) {
    for (int r = 1; r < size; ++r) watched_.push_back(r);
    watchers_ = watched_;
  } else {
    watched_ = {0};
    watchers_ = {0};
  }
  incoming_.assign(watched_.size(), 0);
  receives_.assign(watched_.size(), MPI_REQUEST_NULL);
  heard_.assign(watched_.size(), 0);
  heard_at_.assign(watched_.size(), Clock::now());
  for (size_t i = 0; i < watched_.size(); ++i) post_receive(i);
}

ArrivalMonitor::~ArrivalMonitor() {
  // Every check here only logs: a destructor must not throw, and a failure to tidy up the
  // monitor must not hide the error that may be unwinding the stack.
  for (MPI_Request& request : receives_) {
    if (request == MPI_REQUEST_NULL) continue;
    if (MPI_Cancel(&request) != MPI_SUCCESS || MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      spdlog::error("arrival monitor: cancelling a receive failed");
  }
  // Notices are 8 bytes, sent eagerly: they complete at once unless the peer is gone.
  const auto deadline = std::chrono::steady_clock::now() + kSendDrain;
  while (!sends_.empty()) {
    Notice& notice = sends_.front();
    int done = 0;
    if (MPI_Test(&notice.request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
      sends_.pop_front();
    } else if (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      // MPI may still read the buffer: move the node (its address stays) to a list that is
      // never freed rather than free memory under a live send.
      spdlog::warn("arrival monitor: a notice to a peer did not complete; leaving it to MPI");
      static auto* abandoned = new std::list<Notice>;
      abandoned->splice(abandoned->end(), sends_, sends_.begin());
      MPI_Request_free(&abandoned->back().request);
    }
  }
  if (MPI_Comm_free(&comm_) != MPI_SUCCESS) spdlog::error("MPI_Comm_free(arrivals) failed");
}

void ArrivalMonitor::post_receive(size_t i) {
  mpi_check(
      MPI_Irecv(&incoming_[i], 1, MPI_INT64_T, watched_[i], kArrivalTag, comm_, &receives_[i]),
      "MPI_Irecv(arrival)");
}

void ArrivalMonitor::send_notice(int64_t seq) {
  // Forget the notices that have left.
  for (auto it = sends_.begin(); it != sends_.end();) {
    int done = 0;
    mpi_check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test(arrival send)");
    it = done ? sends_.erase(it) : std::next(it);
  }
  for (int watcher : watchers_) {
    Notice& notice = sends_.emplace_back();
    notice.seq = seq;
    mpi_check(MPI_Isend(&notice.seq, 1, MPI_INT64_T, watcher, kArrivalTag, comm_, &notice.request),
              "MPI_Isend(arrival)");
  }
  sent_at_ = Clock::now();
}

void ArrivalMonitor::arrive(int64_t seq) {
  send_notice(seq);
  receive_notices();
}

void ArrivalMonitor::poll(int64_t seq) {
  if (Clock::now() - sent_at_ >= heartbeat_) send_notice(seq);
  receive_notices();
}

void ArrivalMonitor::receive_notices() {
  for (size_t i = 0; i < watched_.size(); ++i) {
    // Drain: a peer can be several collectives ahead of this rank.
    for (;;) {
      int done = 0;
      mpi_check(MPI_Test(&receives_[i], &done, MPI_STATUS_IGNORE), "MPI_Test(arrival)");
      if (!done) break;
      heard_[i] = std::max(heard_[i], incoming_[i]);
      heard_at_[i] = Clock::now();
      post_receive(i);
    }
  }
}

std::vector<int> ArrivalMonitor::missing(int64_t seq) {
  receive_notices();
  std::vector<int> out;
  for (size_t i = 0; i < watched_.size(); ++i)
    if (heard_[i] < seq) out.push_back(watched_[i]);
  return out;
}

std::vector<int> ArrivalMonitor::quiet_for(double quiet_s) const {
  const auto now = Clock::now();
  std::vector<int> out;
  for (size_t i = 0; i < watched_.size(); ++i)
    if (std::chrono::duration<double>(now - heard_at_[i]).count() > quiet_s)
      out.push_back(watched_[i]);
  return out;
}

}  // namespace comm_internal
}  // namespace placeto
