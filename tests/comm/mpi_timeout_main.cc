// Fault test for CommOptions::timeout_s under a real mpirun: the last rank never enters
// the barrier, so rank 0 must give up after the timeout and abort the whole job (CTest
// comm_mpi_timeout checks the message; MPI_Abort also ends the sleeping rank).
#include <chrono>
#include <cstdio>
#include <thread>

#include "common/comm/factory.h"
#include "common/error.h"

int main(int argc, char** argv) {
  try {
    placeto::MpiRuntime mpi(&argc, &argv);
    placeto::CommOptions options;
    options.backend = "mpi";
    options.timeout_s = 0.5;
    std::unique_ptr<placeto::Communicator> comm = placeto::make_communicator(options, mpi);
    if (comm->rank() == comm->size() - 1) {
      // Stands in for a crashed or stuck rank; far longer than the CTest timeout.
      std::this_thread::sleep_for(std::chrono::seconds(120));
      return 0;
    }
    comm->barrier();
    std::printf("barrier returned although a rank never entered it\n");
    return 1;
  } catch (const placeto::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
