// All-reduce latency by buffer size for one backend and rank count.  Not Google Benchmark:
// its adaptive iteration counts would differ between ranks and deadlock the collective, so
// every rank runs the same fixed iteration count here.  Run under mpirun, e.g.
//   mpirun -np 4 --oversubscribe build/bin/comm_allreduce_bench --backend mpi
// Prints one markdown table row per size (rank 0): latency = median over timed blocks of the
// slowest rank's mean time per call.
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
  int blocks = 5;
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
    } else if (arg == "--blocks" && has_value) {
      out.blocks = std::max(1, std::atoi(argv[++i]));
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
                                "--blocks N, --no-header");
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
        "| ranks | backend | order | floats | blocks x calls | latency (us) | algbw (GB/s) |\n");
    std::printf("|---:|---|---|---:|---:|---:|---:|\n");
  }
  for (size_t n : options.sizes) {
    std::vector<float> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>((i * 7 + comm.rank()) % 13);
    // Same count on every rank: about 4e6 floats moved per timed block, 2 to 400 calls.
    const int iterations =
        static_cast<int>(std::clamp<size_t>(4000000 / std::max<size_t>(n, 1), 2, 400));
    for (int i = 0; i < 3; ++i) comm.all_reduce(data.data(), n, placeto::ReduceOp::kMean);
    // Each block's latency is its slowest rank's; the median block damps a noisy host.
    std::vector<double> blocks;
    for (int block = 0; block < options.blocks; ++block) {
      comm.barrier();
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i) {
        comm.all_reduce(data.data(), n, placeto::ReduceOp::kMean);
      }
      const double mine = seconds_since(start) / iterations;
      const std::vector<double> all = comm.gather_doubles(&mine, 1, 0);
      if (comm.rank() == 0) blocks.push_back(*std::max_element(all.begin(), all.end()));
    }
    if (comm.rank() == 0) {
      std::sort(blocks.begin(), blocks.end());
      const double latency = blocks[blocks.size() / 2];
      // One rank moves nothing, so bandwidth is meaningless there.
      char bandwidth[32] = "n/a";
      if (comm.size() > 1) {
        std::snprintf(bandwidth, sizeof(bandwidth), "%.3f",
                      static_cast<double>(n * sizeof(float)) / latency / 1e9);
      }
      std::printf("| %d | %s | %s | %zu | %dx%d | %.2f | %s |\n", comm.size(),
                  comm.backend_name().c_str(), options.comm.deterministic ? "fixed" : "mpi-native",
                  n, options.blocks, iterations, latency * 1e6, bandwidth);
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
