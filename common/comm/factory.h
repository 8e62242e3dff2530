// make_communicator: picks and builds the backend a run asked for (CommOptions::backend).
//
//   int main(int argc, char** argv) {
//     placeto::MpiRuntime mpi(&argc, &argv);           // first; outlives every communicator
//     auto comm = placeto::make_communicator(options, mpi);
//     ...
//   }
//
// "auto" probes every rank's GPU (CudaDeviceProbe) and takes NCCL only when each rank has a
// distinct one; "nccl" without that fails here, before training starts, with InputError.
// The decision is made from the same gathered list on every rank, so all ranks agree.
//
// Threading: call on the thread that created the MpiRuntime; collective over its world.
#pragma once

#include <memory>

#include "common/comm/backend_choice.h"
#include "common/comm/comm.h"
#include "common/comm/mpi/mpi_runtime.h"

namespace placeto {

// Throws InputError for an unknown or unsatisfiable backend, SystemError when MPI, CUDA or
// NCCL fail.  Logs the choice and its reason on rank 0.
std::unique_ptr<Communicator> make_communicator(const CommOptions& options, MpiRuntime& mpi);

// The same with an injected probe (tests; a site with its own GPU discovery).
std::unique_ptr<Communicator> make_communicator(const CommOptions& options, MpiRuntime& mpi,
                                                const DeviceProbe& probe);

}  // namespace placeto
