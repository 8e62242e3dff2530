// In-process backend: N ranks as N threads of one process, for unit tests of everything
// built on Communicator (the learner's gradient averaging, stop-flag agreement, ...).
// Reductions add ranks in the order 0..N-1, exactly like the deterministic MPI backend, so
// a test here predicts the MPI result bit for bit.
//
// Usage:
//   run_inproc(4, [](Communicator& comm) { ... same code every rank runs ... });
//
// Failure model: abort() on any rank, a timeout (CommOptions::timeout_s), or an exception
// escaping a rank's body marks the group aborted; every rank blocked in or entering a
// collective then throws SystemError, so a test fails instead of hanging.
//
// Threading: an InprocGroup is shared by its ranks' threads; each InprocCommunicator is
// used by its own thread only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/comm/comm.h"

namespace placeto {

// The shared meeting point of the ranks.
class InprocGroup {
 public:
  InprocGroup(int ranks, const CommOptions& options);
  int size() const { return static_cast<int>(posted_.size()); }

  // Creates rank `rank`'s communicator; the group must outlive it.
  std::unique_ptr<Communicator> communicator(int rank);

  // Marks the group aborted and wakes every waiting rank.
  void mark_aborted(const std::string& why);

  // One collective step: every rank posts (pointer, count), waits for all, lets `use` read
  // every rank's posting, then waits again so no posted buffer changes while being read.
  void exchange(int rank, const void* data, size_t count,
                const std::function<void(const std::vector<const void*>&)>& use);

 private:
  void wait_for_all(std::unique_lock<std::mutex>& lock, int rank);

  CommOptions options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  std::vector<const void*> posted_;
  std::vector<size_t> counts_;
  bool aborted_ = false;
  std::string abort_reason_;
};

// A communicator of one rank that owns its group: the single-process trainer
// (`placeto train`), where every collective is a copy.
std::unique_ptr<Communicator> make_single_rank_communicator();

// Runs body(comm) on `ranks` threads, one communicator each, and joins them.  The first
// exception thrown by any rank is rethrown here (after aborting the group so that the
// other ranks stop waiting).
void run_inproc(int ranks, const std::function<void(Communicator&)>& body,
                const CommOptions& options = CommOptions{});

}  // namespace placeto
