#include "common/comm/mpi/mpi_runtime.h"

#include <cstdlib>
#include <string>

#include "common/comm/mpi/mpi_check.h"
#include "common/error.h"
#include "common/logging.h"

namespace placeto {
namespace comm_internal {

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(rc, message, &length) != MPI_SUCCESS) length = 0;
  throw SystemError(std::string("MPI ") + call + " failed (code " + std::to_string(rc) +
                    "): " + std::string(message, static_cast<size_t>(length)));
}

}  // namespace comm_internal

namespace {

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

}  // namespace

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  using comm_internal::mpi_check;
  int initialized = 0, finalized = 0;
  mpi_check(MPI_Initialized(&initialized), "MPI_Initialized");
  mpi_check(MPI_Finalized(&finalized), "MPI_Finalized");
  if (initialized || finalized) {
    throw SystemError("MPI was already initialized in this process; create one MpiRuntime");
  }
  int provided = 0;
  // MPI_Init_thread's own failure cannot go through an error handler yet: check the code.
  mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  try {
    // From here on failures are returned to us instead of aborting the job.
    mpi_check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
    if (provided < MPI_THREAD_SERIALIZED) {
      throw SystemError("MPI provides thread level " + std::to_string(provided) +
                        ", below the MPI_THREAD_SERIALIZED this program needs");
    }
    mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
    mpi_check(MPI_Comm_size(MPI_COMM_WORLD, &world_size_), "MPI_Comm_size");

    MPI_Comm node = MPI_COMM_NULL;
    mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank_, MPI_INFO_NULL,
                                  &node),
              "MPI_Comm_split_type");
    mpi_check(MPI_Comm_rank(node, &local_rank_), "MPI_Comm_rank(node)");
    mpi_check(MPI_Comm_size(node, &local_size_), "MPI_Comm_size(node)");
    mpi_check(MPI_Comm_free(&node), "MPI_Comm_free(node)");

    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int length = 0;
    mpi_check(MPI_Get_processor_name(name, &length), "MPI_Get_processor_name");
    host_name_.assign(name, static_cast<size_t>(length));
  } catch (...) {
    // The destructor will not run for a half-built runtime: finalize here.
    MPI_Finalize();
    throw;
  }
  launched_by_launcher_ =
      env_set("OMPI_COMM_WORLD_SIZE") || env_set("PMIX_RANK") || env_set("PMI_RANK");
}

MpiRuntime::~MpiRuntime() {
  if (live_communicators_.load() != 0) {
    spdlog::error("MpiRuntime destroyed while {} communicator(s) still exist; destroy them first",
                  live_communicators_.load());
  }
  const int rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) spdlog::error("MPI_Finalize failed with code {}", rc);
}

}  // namespace placeto
