// MpiRuntime: the process's MPI lifetime (MPI_Init_thread in the constructor, MPI_Finalize
// in the destructor).  Create exactly one, first thing in main(), and destroy every
// Communicator made from it before it.  A process started without mpirun still works: MPI
// initializes as a singleton of world size 1 (a plain `./placeto_actor` run).
//
// MPI_THREAD_SERIALIZED is required: any one thread at a time may make MPI calls (the
// learner may run its all-reduce on a worker thread).
//
// This header does not include <mpi.h>; executables outside common/comm/ use it freely.
//
// Threading: construct and destroy on the main thread; the accessors are const.
#pragma once

#include <atomic>
#include <string>

namespace placeto {

class MpiRuntime {
 public:
  // argc/argv may be null.  Throws SystemError when MPI cannot start, and when MPI was
  // already initialized or finalized in this process (it cannot be restarted).
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }
  // Index of this rank among the ranks on its host (picks its GPU).
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  // True when a launcher (mpirun, srun with PMI/PMIx) started the process.
  bool launched_by_launcher() const { return launched_by_launcher_; }
  std::string host_name() const { return host_name_; }

  // Bookkeeping so that the destructor can report communicators that outlive MPI.
  void communicator_created() { ++live_communicators_; }
  void communicator_destroyed() { --live_communicators_; }

 private:
  int world_rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool launched_by_launcher_ = false;
  std::string host_name_;
  std::atomic<int> live_communicators_{0};
};

}  // namespace placeto
