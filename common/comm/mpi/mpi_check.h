// Checking MPI return codes: every MPI call in common/comm/ goes through mpi_check, which
// turns a failure into SystemError naming the call and MPI's own message.  Communicators
// made here use MPI_ERRORS_RETURN so that failures reach these checks instead of aborting.
// Internal to common/comm/.
#pragma once

#include <mpi.h>

namespace placeto {
namespace comm_internal {

// Throws SystemError("MPI <call> failed: <MPI_Error_string>") when rc != MPI_SUCCESS.
void mpi_check(int rc, const char* call);

}  // namespace comm_internal
}  // namespace placeto
