// The conformance suite on the in-process backend with 1-4 threads, plus its failure model:
// a timeout, an abort and an exception on one rank end every rank instead of hanging.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <tuple>

#include "common/comm/inproc/inproc_communicator.h"
#include "common/error.h"
#include "tests/comm/conformance.h"

namespace placeto {
namespace {

using conformance::Case;

class InprocConformance : public ::testing::TestWithParam<std::tuple<size_t, int>> {};

TEST_P(InprocConformance, Case) {
  const Case& c = conformance::all_cases()[std::get<0>(GetParam())];
  const int ranks = std::get<1>(GetParam());
  run_inproc(ranks, [&](Communicator& comm) {
    EXPECT_EQ(comm.backend_name(), "inproc");
    EXPECT_EQ(comm.size(), ranks);
    c.run(comm, conformance::Expectations{});
  });
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, InprocConformance,
    ::testing::Combine(::testing::Range<size_t>(0, conformance::all_cases().size()),
                       ::testing::Values(1, 2, 3, 4)),
    [](const ::testing::TestParamInfo<std::tuple<size_t, int>>& info) {
      return std::string(conformance::all_cases()[std::get<0>(info.param)].name) + "_" +
             std::to_string(std::get<1>(info.param)) + "ranks";
    });

TEST(InprocFailures, MissingPeerTimesOut) {
  CommOptions options;
  options.timeout_s = 0.2;
  try {
    run_inproc(
        2,
        [](Communicator& comm) {
          if (comm.rank() == 0) comm.barrier();  // rank 1 never comes
        },
        options);
    FAIL() << "no timeout";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("comm.timeout_s"), std::string::npos) << e.what();
  }
}

TEST(InprocFailures, AbortReleasesEveryRank) {
  std::atomic<int> released{0};
  try {
    run_inproc(3, [&](Communicator& comm) {
      if (comm.rank() == 2) comm.abort(7, "learner diverged");
      try {
        comm.barrier();
      } catch (const SystemError&) {
        ++released;
        throw;
      }
    });
    FAIL() << "abort did not propagate";
  } catch (const SystemError& e) {
    EXPECT_STREQ(e.what(), "rank 2 aborted (code 7): learner diverged");
  }
  EXPECT_EQ(released.load(), 2);
}

TEST(InprocFailures, ExceptionOnOneRankIsRethrownAndFreesThePeers) {
  EXPECT_THROW(run_inproc(4,
                          [](Communicator& comm) {
                            if (comm.rank() == 1) throw std::runtime_error("bad batch");
                            float x = 1;
                            comm.all_reduce(&x, 1, ReduceOp::kSum);
                          }),
               std::runtime_error);
}

}  // namespace
}  // namespace placeto
