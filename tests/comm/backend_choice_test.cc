// Backend auto-selection as a pure function, the gathering of per-rank probe results, and
// the real CUDA probe on whatever machine runs the test.
#include "common/comm/backend_choice.h"

#include <gtest/gtest.h>

#include <map>

#include "common/comm/inproc/inproc_communicator.h"
#include "common/comm/nccl/cuda_probe.h"
#include "common/error.h"

namespace placeto {
namespace {

GpuIdentity gpu(const std::string& id) { return GpuIdentity{id, 0, ""}; }
GpuIdentity none(const std::string& why) { return GpuIdentity{"", -1, why}; }

std::string input_error_of(const std::string& requested, const std::vector<GpuIdentity>& gpus) {
  try {
    choose_backend(requested, gpus);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ChooseBackend, AutoTakesNcclWhenEveryRankHasItsOwnGpu) {
  EXPECT_EQ(choose_backend("auto", {gpu("a/0000:01:00.0"), gpu("a/0000:02:00.0")}).backend, "nccl");
  EXPECT_EQ(choose_backend("auto", {gpu("a/0000:01:00.0")}).backend, "nccl");
  // The same bus id on two hosts is two GPUs.
  EXPECT_EQ(choose_backend("auto", {gpu("a/0000:01:00.0"), gpu("b/0000:01:00.0")}).backend, "nccl");
}

TEST(ChooseBackend, AutoFallsBackToMpiWhenARankHasNoGpu) {
  const BackendChoice c = choose_backend(
      "auto", {gpu("a/1"), none("cudaGetDeviceCount: CUDA driver version is insufficient")});
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.reason,
            "auto: rank 1 has no usable GPU (cudaGetDeviceCount: CUDA driver version is "
            "insufficient)");
}

TEST(ChooseBackend, AutoFallsBackToMpiWhenTwoRanksShareAGpu) {
  const BackendChoice c = choose_backend("auto", {gpu("a/1"), gpu("a/2"), gpu("a/1")});
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.reason, "auto: ranks 0 and 2 share GPU a/1 (NCCL needs one GPU per rank)");
}

TEST(ChooseBackend, MpiIsTakenWhenAskedEvenWithGpus) {
  EXPECT_EQ(choose_backend("mpi", {gpu("a/1"), gpu("a/2")}).backend, "mpi");
}

TEST(ChooseBackend, NcclWithoutAGpuPerRankIsAnInputError) {
  EXPECT_EQ(input_error_of("nccl", {none("libcudart not found")}),
            "comm: backend 'nccl' requested but rank 0 has no usable GPU (libcudart not found); "
            "use 'mpi' or 'auto' on nodes without one GPU per rank");
  EXPECT_EQ(input_error_of("nccl", {gpu("a/1"), gpu("a/1")}),
            "comm: backend 'nccl' requested but ranks 0 and 1 share GPU a/1 (NCCL needs one GPU "
            "per rank); use 'mpi' or 'auto' on nodes without one GPU per rank");
  EXPECT_EQ(choose_backend("nccl", {gpu("a/1"), gpu("a/2")}).backend, "nccl");
}

TEST(ChooseBackend, UnknownNameSuggestsTheClosest) {
  EXPECT_EQ(input_error_of("ncl", {gpu("a/1")}),
            "comm: unknown backend 'ncl' (did you mean 'nccl'?); choose auto, mpi or nccl");
}

// A probe that answers from a table: local rank -> identity.
class FakeProbe : public DeviceProbe {
 public:
  explicit FakeProbe(std::map<int, GpuIdentity> by_rank) : by_rank_(std::move(by_rank)) {}
  GpuIdentity probe(int local_rank) const override { return by_rank_.at(local_rank); }

 private:
  std::map<int, GpuIdentity> by_rank_;
};

TEST(GatherGpuIdentities, EveryRankSeesTheSameListAndTheSameChoice) {
  const FakeProbe probe({{0, GpuIdentity{"h/0", 0, ""}},
                         {1, GpuIdentity{"h/1", 1, ""}},
                         {2, GpuIdentity{"", -1, "no driver"}}});
  run_inproc(3, [&](Communicator& comm) {
    const std::vector<GpuIdentity> all = gather_gpu_identities(comm, probe, comm.rank());
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].id, "h/0");
    EXPECT_EQ(all[1].id, "h/1");
    EXPECT_EQ(all[2].why_none, "no driver");
    // Only this rank's device index is known locally.
    EXPECT_EQ(all[comm.rank()].device, comm.rank() == 2 ? -1 : comm.rank());
    EXPECT_EQ(choose_backend("auto", all).reason, "auto: rank 2 has no usable GPU (no driver)");
  });
}

TEST(CudaDeviceProbe, ReportsAGpuOrWhyThereIsNone) {
  const GpuIdentity found = CudaDeviceProbe("thishost").probe(0);
  if (found.id.empty()) {
    // CPU-only machines: no libcudart, or cudaErrorInsufficientDriver without a driver.
    EXPECT_FALSE(found.why_none.empty());
    std::cout << "no GPU: " << found.why_none << "\n";
  } else {
    EXPECT_EQ(found.id.rfind("thishost/", 0), 0u) << found.id;
    EXPECT_GE(found.device, 0);
    std::cout << "GPU: " << found.id << "\n";
  }
}

}  // namespace
}  // namespace placeto
