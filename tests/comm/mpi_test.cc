// The conformance suite under a real `mpirun -np 1..4` (CTest: comm_mpi_np*), and as a
// singleton without mpirun (comm_mpi_singleton); the factory's backend selection with fake
// probes; and, when the machine has a GPU, NCCL against MPI (launch/check_nccl.sh).
//
// Every test is collective: all ranks run the same tests in the same order.  Rank 0 prints
// the usual gtest output; other ranks print only their failures.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include "common/comm/factory.h"
#include "common/comm/nccl/cuda_probe.h"
#include "common/error.h"
#include "tests/comm/conformance.h"

namespace placeto {
namespace {

MpiRuntime* g_mpi = nullptr;

std::unique_ptr<Communicator> make(const std::string& backend, bool deterministic = true,
                                   double timeout_s = 0) {
  CommOptions options;
  options.backend = backend;
  options.deterministic = deterministic;
  options.timeout_s = timeout_s;
  return make_communicator(options, *g_mpi);
}

// PLACETO_REQUIRE_GPU=1 (set by launch/check_nccl.sh on GPU machines) turns the NCCL
// tests' "no GPU" skips into failures, so a broken driver cannot pass as a skip.
bool gpu_required() {
  const char* require = std::getenv("PLACETO_REQUIRE_GPU");
  return require != nullptr && std::string(require) == "1";
}

class MpiConformance : public ::testing::TestWithParam<size_t> {};

TEST_P(MpiConformance, FixedOrder) {
  std::unique_ptr<Communicator> comm = make("mpi");
  EXPECT_EQ(comm->backend_name(), "mpi");
  conformance::all_cases()[GetParam()].run(*comm, conformance::Expectations{true});
}

// With a timeout every collective takes the non-blocking, polled path.
TEST_P(MpiConformance, FixedOrderWithTimeout) {
  std::unique_ptr<Communicator> comm = make("mpi", /*deterministic=*/true, /*timeout_s=*/120);
  conformance::all_cases()[GetParam()].run(*comm, conformance::Expectations{true});
}

TEST_P(MpiConformance, MpiNativeOrder) {
  std::unique_ptr<Communicator> comm = make("mpi", /*deterministic=*/false);
  conformance::all_cases()[GetParam()].run(*comm, conformance::Expectations{false});
}

// NCCL when every rank has its own GPU; skipped (on every rank alike) otherwise.
TEST_P(MpiConformance, Nccl) {
  std::vector<GpuIdentity> gpus;
  {
    std::unique_ptr<Communicator> probe_comm = make("mpi");
    gpus = gather_gpu_identities(*probe_comm, CudaDeviceProbe(g_mpi->host_name()),
                                 g_mpi->local_rank());
  }
  const BackendChoice choice = choose_backend("auto", gpus);
  if (choice.backend != "nccl") {
    if (gpu_required()) FAIL() << "PLACETO_REQUIRE_GPU=1 but NCCL not usable: " << choice.reason;
    GTEST_SKIP() << "NCCL not usable: " << choice.reason;
  }
  std::unique_ptr<Communicator> comm = make("nccl");
  EXPECT_EQ(comm->backend_name(), "nccl");
  conformance::all_cases()[GetParam()].run(*comm, conformance::Expectations{false});
}

INSTANTIATE_TEST_SUITE_P(AllCases, MpiConformance,
                         ::testing::Range<size_t>(0, conformance::all_cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return std::string(conformance::all_cases()[info.param].name);
                         });

TEST(MpiRuntime, DescribesTheWorld) {
  std::unique_ptr<Communicator> comm = make("mpi");
  EXPECT_EQ(comm->rank(), g_mpi->world_rank());
  EXPECT_EQ(comm->size(), g_mpi->world_size());
  EXPECT_LT(g_mpi->local_rank(), g_mpi->local_size());
  EXPECT_FALSE(g_mpi->host_name().empty());
  // Without mpirun the process is a singleton of world size 1.
  if (!g_mpi->launched_by_launcher()) {
    EXPECT_EQ(g_mpi->world_size(), 1);
  }
}

TEST(MpiAllReduce, FixedOrderEqualsASerialLoopOverRanks) {
  // Order matters from three ranks on; with fewer this still checks exactness.
  std::unique_ptr<Communicator> comm = make("mpi");
  const size_t n = 1000000;
  std::vector<float> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = conformance::sample_float(comm->rank(), i);
  comm->all_reduce(data.data(), n, ReduceOp::kSum);
  const std::vector<float> want = conformance::reference_sum_float(comm->size(), n);
  EXPECT_EQ(std::memcmp(data.data(), want.data(), n * sizeof(float)), 0);
}

class TableProbe : public DeviceProbe {
 public:
  explicit TableProbe(std::function<GpuIdentity(int)> f) : f_(std::move(f)) {}
  GpuIdentity probe(int local_rank) const override { return f_(local_rank); }

 private:
  std::function<GpuIdentity(int)> f_;
};

TEST(MakeCommunicator, AutoPicksMpiWhenTheLastRankHasNoGpu) {
  const int last = g_mpi->world_size() - 1;
  const TableProbe probe([last](int local_rank) {
    if (local_rank == last) return GpuIdentity{"", -1, "fake: no device"};
    return GpuIdentity{"fakehost/" + std::to_string(local_rank), local_rank, ""};
  });
  std::unique_ptr<Communicator> comm = make_communicator(CommOptions{}, *g_mpi, probe);
  EXPECT_EQ(comm->backend_name(), "mpi");
}

TEST(MakeCommunicator, NcclWithoutAGpuFailsOnEveryRankBeforeTraining) {
  const int last = g_mpi->world_size() - 1;
  const TableProbe probe([last](int local_rank) {
    if (local_rank == last) return GpuIdentity{"", -1, "fake: no device"};
    return GpuIdentity{"fakehost/" + std::to_string(local_rank), local_rank, ""};
  });
  CommOptions options;
  options.backend = "nccl";
  try {
    make_communicator(options, *g_mpi, probe);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "comm: backend 'nccl' requested but rank " + std::to_string(last) +
                  " has no usable GPU (fake: no device); use 'mpi' or 'auto' on nodes without "
                  "one GPU per rank");
  }
}

TEST(MakeCommunicator, AutoWithTheRealProbeGivesAWorkingBackend) {
  std::unique_ptr<Communicator> comm = make("auto");
  float x = 1.5f;
  comm->all_reduce(&x, 1, ReduceOp::kSum);
  EXPECT_EQ(x, 1.5f * comm->size()) << comm->backend_name();
}

// The acceptance check on a GPU machine: 1-rank NCCL equals MPI bit for bit.
TEST(NcclVsMpi, OneRankResultsAreBitEqual) {
  if (g_mpi->world_size() != 1) GTEST_SKIP() << "runs with one rank (mpirun -np 1)";
  const GpuIdentity gpu = CudaDeviceProbe(g_mpi->host_name()).probe(g_mpi->local_rank());
  if (gpu.id.empty()) {
    if (gpu_required()) FAIL() << "PLACETO_REQUIRE_GPU=1 but no GPU: " << gpu.why_none;
    GTEST_SKIP() << "no GPU: " << gpu.why_none;
  }
  std::unique_ptr<Communicator> nccl = make("nccl");
  std::unique_ptr<Communicator> mpi = make("mpi");
  ASSERT_EQ(nccl->backend_name(), "nccl");
  for (size_t n : {size_t{1}, size_t{1000}, size_t{1000000}}) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMean}) {
      std::vector<float> a(n), b(n);
      for (size_t i = 0; i < n; ++i) a[i] = b[i] = conformance::sample_float(0, i);
      nccl->all_reduce(a.data(), n, op);
      mpi->all_reduce(b.data(), n, op);
      EXPECT_EQ(std::memcmp(a.data(), b.data(), n * sizeof(float)), 0) << "n=" << n;
      std::vector<double> c(n), d(n);
      for (size_t i = 0; i < n; ++i) c[i] = d[i] = conformance::sample_double(0, i);
      nccl->all_reduce(c.data(), n, op);
      mpi->all_reduce(d.data(), n, op);
      EXPECT_EQ(std::memcmp(c.data(), d.data(), n * sizeof(double)), 0) << "n=" << n;
    }
  }
  std::vector<unsigned char> bytes(4096, 7);
  nccl->broadcast(bytes.data(), bytes.size(), 0);
  EXPECT_EQ(bytes[4095], 7);
}

// With the fake libcudart/libnccl (CTest comm_fake_gpu, PLACETO_FAKE_GPU=1): the probe and
// the NCCL backend's error paths, which a real GPU cannot be made to produce on demand.
class FakeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* fake = std::getenv("PLACETO_FAKE_GPU");
    if (fake == nullptr || std::string(fake) != "1") GTEST_SKIP() << "needs the fake GPU library";
  }
  // Environment variables the fake reads on every call.
  void TearDown() override {
    unsetenv("FAKE_NCCL_FAIL");
    unsetenv("FAKE_CUDA_DEVICE_COUNT");
  }
};

TEST_F(FakeGpu, ProbeNamesHostAndBusId) {
  const GpuIdentity gpu = CudaDeviceProbe("node7").probe(0);
  EXPECT_EQ(gpu.id, "node7/0000:10:00.0");
  EXPECT_EQ(gpu.device, 0);
}

TEST_F(FakeGpu, FailedNcclCallNamesTheCall) {
  std::unique_ptr<Communicator> comm = make("nccl");
  setenv("FAKE_NCCL_FAIL", "1", 1);
  float x = 1;
  try {
    comm->all_reduce(&x, 1, ReduceOp::kSum);
    FAIL() << "no error";
  } catch (const SystemError& e) {
    EXPECT_STREQ(e.what(), "NCCL ncclAllReduce failed: fake: system error (error 2)");
  }
}

TEST_F(FakeGpu, NoDeviceMeansMpiForAutoAndAnErrorForNccl) {
  setenv("FAKE_CUDA_DEVICE_COUNT", "0", 1);
  const GpuIdentity gpu = CudaDeviceProbe("node7").probe(0);
  EXPECT_EQ(gpu.id, "");
  EXPECT_EQ(gpu.why_none,
            "cudaGetDeviceCount: fake: no CUDA-capable device is detected (error 100)");
  EXPECT_EQ(make("auto")->backend_name(), "mpi");
  EXPECT_THROW(make("nccl"), InputError);
}

// The real probe's distinct-GPU rule: with one (fake) device per host, two ranks on the
// host both get device 0, so auto must stay on MPI and nccl must refuse.
TEST_F(FakeGpu, TwoRanksOnOneGpuStayOnMpi) {
  if (g_mpi->world_size() < 2) GTEST_SKIP() << "needs mpirun -np 2 or more";
  setenv("FAKE_CUDA_DEVICE_COUNT", "1", 1);
  EXPECT_EQ(make("auto")->backend_name(), "mpi");
  try {
    make("nccl");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ranks 0 and 1 share GPU " + g_mpi->host_name() +
                                         "/0000:10:00.0"),
              std::string::npos)
        << e.what();
  }
}

// Non-zero ranks print only failed assertions, prefixed with their rank.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_,
                 result.file_name() ? result.file_name() : "?", result.line_number(),
                 result.summary());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace placeto

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  try {
    placeto::MpiRuntime mpi(&argc, &argv);
    placeto::g_mpi = &mpi;
    if (mpi.world_rank() != 0) {
      ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new placeto::FailurePrinter(mpi.world_rank()));
    }
    int failed = RUN_ALL_TESTS();
    // Every rank exits with the job's verdict.
    {
      std::unique_ptr<placeto::Communicator> comm = placeto::make("mpi");
      failed = static_cast<int>(comm->all_reduce_max(failed));
    }
    return failed;
  } catch (const placeto::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
