// Fault tests for CommOptions::timeout_s under a real mpirun (CTest comm_mpi_timeout_*):
// every rank runs two collectives, then one rank goes silent before collective #3 while the
// others enter it.  The job must end within the timeout (MPI_Abort ends the silent rank too)
// with a message naming the silent rank (common/comm/mpi/arrival_monitor.h).
//
// Usage: comm_mpi_timeout MODE SILENT_RANK
//   sleep  the silent rank sleeps (a stuck or deadlocked rank)
//   stop   it sends itself SIGSTOP (a hung process: `kill -STOP`, a debugger, swapped out)
//   exit   it destroys its communicator, calls MPI_Finalize and exits 0 (an early exit)
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/comm/factory.h"
#include "common/error.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: comm_mpi_timeout sleep|stop|exit SILENT_RANK\n");
    return 64;
  }
  const std::string mode = argv[1];
  const int silent = std::atoi(argv[2]);
  try {
    placeto::MpiRuntime mpi(&argc, &argv);
    {
      placeto::CommOptions options;
      options.backend = "mpi";
      options.timeout_s = 0.5;
      std::unique_ptr<placeto::Communicator> comm = placeto::make_communicator(options, mpi);
      if (comm->all_reduce_max(comm->rank()) != comm->size() - 1) return 1;  // #1
      comm->barrier();                                                       // #2
      if (comm->rank() != silent) {
        comm->barrier();  // #3
        std::printf("barrier returned although rank %d never entered it\n", silent);
        return 1;
      }
      if (mode == "sleep") {
        // Far longer than the CTest timeout.
        std::this_thread::sleep_for(std::chrono::seconds(120));
      } else if (mode == "stop") {
        raise(SIGSTOP);
      } else if (mode != "exit") {
        std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
        return 64;
      }
    }
    // "exit": the communicator is gone; ~MpiRuntime calls MPI_Finalize, then exit code 0.
    return 0;
  } catch (const placeto::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
