// The conformance suite every Communicator backend must pass: sum and mean of float and
// double buffers from 1 to 10^6 elements, repeatability, broadcast from every root,
// gather, all-gather, max and barrier.  The same cases run on the in-process backend
// (1-4 threads), on MPI under `mpirun -np 1..4`, and on NCCL when a GPU is present.
//
// Every case is collective: all ranks call it with their own communicator.
#pragma once

#include <string>
#include <vector>

#include "common/comm/comm.h"

namespace placeto {
namespace conformance {

struct Expectations {
  // The backend adds ranks in order 0..P-1 (bit-equal to a serial loop); otherwise the
  // result must be within a relative tolerance of that reference.
  bool rank_order_sum = true;
};

struct Case {
  const char* name;
  void (*run)(Communicator& comm, const Expectations& expect);
};

const std::vector<Case>& all_cases();

// Deterministic, order-sensitive test data: varied signs and exponents so that adding in
// another order changes the rounding.
float sample_float(int rank, size_t i);
double sample_double(int rank, size_t i);

// The rank-order reference sum of sample data over `ranks` ranks.
std::vector<float> reference_sum_float(int ranks, size_t n);

}  // namespace conformance
}  // namespace placeto
