#include "tests/comm/conformance.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

namespace placeto {
namespace conformance {
namespace {

uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

template <typename T>
T sample(int rank, size_t i) {
  const uint64_t h = mix((static_cast<uint64_t>(rank) << 40) ^ i);
  // A full-width mantissa, so that reordering rounds differently in double too.
  constexpr int kBits = std::numeric_limits<T>::digits - 1;
  const uint64_t bits = mix(h) & ((uint64_t{1} << kBits) - 1);
  const T mantissa = std::ldexp(static_cast<T>(bits), -kBits);
  const int exponent = static_cast<int>((h >> 24) % 24) - 12;
  const T sign = ((h >> 50) & 1) ? T(-1) : T(1);
  return sign * std::ldexp(T(1) + mantissa, exponent);
}

template <typename T>
std::vector<T> reference_sum(int ranks, size_t n) {
  std::vector<T> out(n);
  for (size_t i = 0; i < n; ++i) {
    T acc = sample<T>(0, i);
    for (int r = 1; r < ranks; ++r) acc += sample<T>(r, i);
    out[i] = acc;
  }
  return out;
}

// Index of the first element that differs (bitwise, or beyond tolerance), or -1.
template <typename T>
long first_mismatch(const std::vector<T>& got, const std::vector<T>& want, bool exact, int ranks) {
  for (size_t i = 0; i < got.size(); ++i) {
    if (exact) {
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) return static_cast<long>(i);
    } else {
      // Reordering P terms moves the result by at most ~P ulps of the largest partial sum;
      // every sample's magnitude is below 2^12.
      const T scale = static_cast<T>(ranks) * static_cast<T>(ranks) * T(4096);
      const T tolerance = scale * std::numeric_limits<T>::epsilon() * T(2);
      if (!(std::fabs(got[i] - want[i]) <= tolerance)) return static_cast<long>(i);
    }
  }
  return -1;
}

const size_t kFloatSizes[] = {1, 2, 3, 5, 1000, 65537, 1000000};
const size_t kDoubleSizes[] = {1, 3, 1000, 100000};

template <typename T>
void check_reduce(Communicator& comm, const Expectations& expect, ReduceOp op, size_t n) {
  std::vector<T> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = sample<T>(comm.rank(), i);
  comm.all_reduce(data.data(), n, op);
  std::vector<T> want = reference_sum<T>(comm.size(), n);
  if (op == ReduceOp::kMean) {
    for (T& x : want) x /= static_cast<T>(comm.size());
  }
  const bool exact = expect.rank_order_sum || comm.size() == 1;
  const long bad = first_mismatch(data, want, exact, comm.size());
  EXPECT_EQ(bad, -1) << "rank " << comm.rank() << " of " << comm.size() << ", n=" << n
                     << (op == ReduceOp::kMean ? " mean" : " sum") << ": element " << bad << " is "
                     << (bad >= 0 ? data[bad] : T(0)) << ", want " << (bad >= 0 ? want[bad] : T(0));
}

void sum_float(Communicator& comm, const Expectations& expect) {
  for (size_t n : kFloatSizes) check_reduce<float>(comm, expect, ReduceOp::kSum, n);
}

void mean_float(Communicator& comm, const Expectations& expect) {
  for (size_t n : kFloatSizes) check_reduce<float>(comm, expect, ReduceOp::kMean, n);
}

void sum_and_mean_double(Communicator& comm, const Expectations& expect) {
  for (size_t n : kDoubleSizes) {
    check_reduce<double>(comm, expect, ReduceOp::kSum, n);
    check_reduce<double>(comm, expect, ReduceOp::kMean, n);
  }
}

void empty_buffer_is_a_no_op(Communicator& comm, const Expectations&) {
  std::vector<float> empty;
  comm.all_reduce(empty.data(), 0, ReduceOp::kMean);
  // The group is still in step afterwards.
  EXPECT_EQ(comm.all_reduce_max(comm.rank()), comm.size() - 1);
}

void repeated_reduce_is_bit_identical(Communicator& comm, const Expectations&) {
  const size_t n = 100003;
  std::vector<float> first(n), second(n);
  for (size_t i = 0; i < n; ++i) first[i] = second[i] = sample<float>(comm.rank(), i);
  comm.all_reduce(first.data(), n, ReduceOp::kMean);
  comm.all_reduce(second.data(), n, ReduceOp::kMean);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), n * sizeof(float)), 0)
      << "rank " << comm.rank() << ": two reductions of the same data differ";
}

void broadcast_from_every_root(Communicator& comm, const Expectations&) {
  for (size_t bytes : {size_t{1}, size_t{1000}, size_t{4000000}}) {
    for (int root = 0; root < comm.size(); ++root) {
      std::vector<unsigned char> buffer(bytes);
      for (size_t i = 0; i < bytes; ++i) {
        // Non-roots start from something else, so a missed copy shows.
        const int who = comm.rank() == root ? root : 1000 + comm.rank();
        buffer[i] = static_cast<unsigned char>(mix(static_cast<uint64_t>(who) * 7919 + i));
      }
      comm.broadcast(buffer.data(), bytes, root);
      size_t wrong = 0;
      for (size_t i = 0; i < bytes; ++i) {
        wrong +=
            buffer[i] != static_cast<unsigned char>(mix(static_cast<uint64_t>(root) * 7919 + i));
      }
      EXPECT_EQ(wrong, 0u) << "rank " << comm.rank() << ", root " << root << ", " << bytes
                           << " bytes";
    }
  }
}

void gather_doubles_in_rank_order(Communicator& comm, const Expectations&) {
  const int root = comm.size() - 1;
  const double local[2] = {static_cast<double>(comm.rank()), comm.rank() * 10 + 0.5};
  const std::vector<double> all = comm.gather_doubles(local, 2, root);
  if (comm.rank() != root) {
    EXPECT_TRUE(all.empty());
    return;
  }
  ASSERT_EQ(all.size(), static_cast<size_t>(2 * comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    EXPECT_EQ(all[2 * r], r);
    EXPECT_EQ(all[2 * r + 1], r * 10 + 0.5);
  }
}

void all_gather_strings_of_every_length(Communicator& comm, const Expectations&) {
  const std::string mine = "rank" + std::string(static_cast<size_t>(comm.rank()) * 3, 'x');
  const std::vector<std::string> all = comm.all_gather_strings(mine);
  ASSERT_EQ(all.size(), static_cast<size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    EXPECT_EQ(all[r], "rank" + std::string(static_cast<size_t>(r) * 3, 'x'));
  }
  EXPECT_EQ(comm.all_gather_strings(""), std::vector<std::string>(comm.size(), ""));
}

void max_agrees_on_stop_flags(Communicator& comm, const Expectations&) {
  EXPECT_EQ(comm.all_reduce_max(comm.rank() * 3 - 5), (comm.size() - 1) * 3 - 5);
  // One rank raising a flag is seen by all.
  EXPECT_EQ(comm.all_reduce_max(comm.rank() == comm.size() - 1 ? 1 : 0), 1);
  EXPECT_EQ(comm.all_reduce_max(int64_t{1} << 40), int64_t{1} << 40);
}

double now_s() {
  // steady_clock is CLOCK_MONOTONIC: one clock for all processes of a host.
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void barrier_waits_for_the_last_rank(Communicator& comm, const Expectations&) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30 * comm.rank()));
  const double entered = now_s();
  comm.barrier();
  const double left = now_s();
  std::vector<double> entries(static_cast<size_t>(comm.size()));
  comm.all_gather_bytes(&entered, sizeof(double), entries.data());
  const double last_entry = *std::max_element(entries.begin(), entries.end());
  EXPECT_GE(left, last_entry) << "rank " << comm.rank() << " left the barrier before rank "
                              << (std::max_element(entries.begin(), entries.end()) -
                                  entries.begin())
                              << " entered it";
}

void ranks_are_distinct_and_dense(Communicator& comm, const Expectations&) {
  const int32_t mine = comm.rank();
  std::vector<int32_t> ranks(static_cast<size_t>(comm.size()));
  comm.all_gather_bytes(&mine, sizeof(mine), ranks.data());
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(ranks[r], r);
}

}  // namespace

float sample_float(int rank, size_t i) { return sample<float>(rank, i); }
double sample_double(int rank, size_t i) { return sample<double>(rank, i); }
std::vector<float> reference_sum_float(int ranks, size_t n) {
  return reference_sum<float>(ranks, n);
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = {
      {"SumFloat", sum_float},
      {"MeanFloat", mean_float},
      {"SumAndMeanDouble", sum_and_mean_double},
      {"EmptyBufferIsANoOp", empty_buffer_is_a_no_op},
      {"RepeatedReduceIsBitIdentical", repeated_reduce_is_bit_identical},
      {"BroadcastFromEveryRoot", broadcast_from_every_root},
      {"GatherDoublesInRankOrder", gather_doubles_in_rank_order},
      {"AllGatherStrings", all_gather_strings_of_every_length},
      {"MaxAgreesOnStopFlags", max_agrees_on_stop_flags},
      {"BarrierWaitsForTheLastRank", barrier_waits_for_the_last_rank},
      {"RanksAreDistinctAndDense", ranks_are_distinct_and_dense},
  };
  return cases;
}

}  // namespace conformance
}  // namespace placeto
