// ArrivalMonitor: tells, when a collective times out, WHICH ranks never reached it.  A
// timed-out MPI collective by itself only says that this rank waited; the rank that hangs
// (SIGSTOP, a deadlock), exited early or died is the one the user needs to see.
//
// Protocol, on a private duplicate of the communicator (so notices never match collective
// traffic): before collective #n every rank posts a non-blocking 8-byte send "arrived at #n"
// to the ranks that watch it.  Rank 0 watches every other rank; every other rank watches
// rank 0.  A rank keeps one posted receive per watched rank and records the highest #n heard
// from each (messages between two ranks arrive in order).  So on a timeout rank 0 can name
// every rank that did not arrive, and any other rank can tell whether rank 0 arrived.
//
// Heartbeats: while a rank waits inside a collective it repeats its notice every
// `heartbeat_s`, so rank 0 can also tell a rank that reached the collective and then stopped
// (SIGSTOP, a hung progress thread) from one that is waiting like itself.
//
// Cost per collective: rank 0 sends and receives P-1 small messages, the others one each;
// nothing at all without a timeout (MpiCommunicator makes a monitor only when
// CommOptions::timeout_s > 0 and there are several ranks).  Every MPI call is checked
// (mpi_check throws SystemError).
//
// Threading: used by the thread that runs the communicator's collectives (one at a time).
// Internal to common/comm/.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

namespace placeto {
namespace comm_internal {

class ArrivalMonitor {
 public:
  // Duplicates `comm` (collective: every rank constructs its monitor at the same point).
  ArrivalMonitor(MPI_Comm comm, int rank, int size, double heartbeat_s);
  // Cancels the posted receives; waits a bounded time for this rank's own notices to leave.
  ~ArrivalMonitor();
  ArrivalMonitor(const ArrivalMonitor&) = delete;
  ArrivalMonitor& operator=(const ArrivalMonitor&) = delete;

  // This rank reached collective `seq` (1, 2, ...: the same numbering on every rank).
  void arrive(int64_t seq);
  // Records the notices received so far and, every heartbeat_s, repeats this rank's notice
  // for collective `seq`; cheap, called while a collective is polled.
  void poll(int64_t seq);
  // The watched ranks that have not reported collective `seq`, ascending (after a poll).
  std::vector<int> missing(int64_t seq);
  // The watched ranks not heard from (arrival or heartbeat) for longer than `quiet_s`.
  std::vector<int> quiet_for(double quiet_s) const;

 private:
  struct Notice {
    int64_t seq = 0;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  using Clock = std::chrono::steady_clock;
  void post_receive(size_t i);
  void send_notice(int64_t seq);
  void receive_notices();

  MPI_Comm comm_ = MPI_COMM_NULL;
  // The ranks this rank watches (receives from) and the ranks that watch it (sends to).
  std::vector<int> watched_;
  std::vector<int> watchers_;
  // Per watched rank: the posted receive's buffer and request, and the highest #n heard.
  std::vector<int64_t> incoming_;
  std::vector<MPI_Request> receives_;
  std::vector<int64_t> heard_;
  std::vector<Clock::time_point> heard_at_;
  std::chrono::duration<double> heartbeat_;
  Clock::time_point sent_at_;
  // This rank's sends still in flight (a list: their buffers must not move).
  std::list<Notice> sends_;
};

// "rank 3" or "ranks 1, 3"
std::string describe_ranks(const std::vector<int>& ranks);

}  // namespace comm_internal
}  // namespace placeto
