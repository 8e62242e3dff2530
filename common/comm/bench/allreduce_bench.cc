// All-reduce latency by buffer size for one backend and rank count.  Not Google Benchmark:
// its adaptive iteration counts would differ between ranks and deadlock the collective, so
// every rank runs the same fixed iteration count here.  Run under mpirun, e.g.
//   mpirun -np 4 --oversubscribe build/bin/comm_allreduce_bench --backend mpi
// Prints one markdown table row per size (rank 0), latency = slowest rank's mean.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/comm/factory.h"
#include "common/error.h"

namespace {

struct BenchOptions {
  placeto::CommOptions comm;
  std::vector<size_t> sizes = {100, 1000, 10000, 100000, 1000000};
  bool header = true;
};

BenchOptions parse(int argc, char** argv) {
  BenchOptions out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--backend" && has_value) {
      out.comm.backend = argv[++i];
    } else if (arg == "--nondeterministic") {
      out.comm.deterministic = false;
    } else if (arg == "--no-header") {
      out.header = false;
    } else if (arg == "--sizes" && has_value) {
      out.sizes.clear();
      for (char* s = std::strtok(argv[++i], ","); s != nullptr; s = std::strtok(nullptr, ",")) {
        out.sizes.push_back(std::strtoull(s, nullptr, 10));
      }
    } else {
      throw placeto::InputError("comm_allreduce_bench: unknown argument '" + arg +
                                "'; use --backend B, --nondeterministic, --sizes a,b,c, "
                                "--no-header");
    }
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run(placeto::Communicator& comm, const BenchOptions& options) {
  if (comm.rank() == 0 && options.header) {
    std::printf(
        "| ranks | backend | order | floats | iterations | latency (us) | algbw (GB/s) |\n");
    std::printf("|---:|---|---|---:|---:|---:|---:|\n");
  }
  for (size_t n : options.sizes) {
    std::vector<float> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>((i * 7 + comm.rank()) % 13);
    // Same count on every rank: about 2e7 floats moved per size, between 10 and 2000 calls.
    const int iterations =
        static_cast<int>(std::clamp<size_t>(20000000 / std::max<size_t>(n, 1), 10, 2000));
    for (int i = 0; i < 3; ++i) comm.all_reduce(data.data(), n, placeto::ReduceOp::kMean);
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      comm.all_reduce(data.data(), n, placeto::ReduceOp::kMean);
    }
    const double mine = seconds_since(start) / iterations;
    const std::vector<double> all = comm.gather_doubles(&mine, 1, 0);
    if (comm.rank() == 0) {
      const double latency = *std::max_element(all.begin(), all.end());
      std::printf("| %d | %s | %s | %zu | %d | %.2f | %.3f |\n", comm.size(),
                  comm.backend_name().c_str(), options.comm.deterministic ? "fixed" : "mpi-native",
                  n, iterations, latency * 1e6,
                  static_cast<double>(n * sizeof(float)) / latency / 1e9);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    placeto::MpiRuntime mpi(&argc, &argv);
    const BenchOptions options = parse(argc, argv);
    std::unique_ptr<placeto::Communicator> comm = placeto::make_communicator(options.comm, mpi);
    run(*comm, options);
  } catch (const placeto::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
