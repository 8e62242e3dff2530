// Cost of writing, reading and publishing checkpoints (Google Benchmark).  The argument is
// the number of f32 elements of the big model parameter; the file holds it three times
// (parameter, exp_avg, exp_avg_sq) plus make_test_checkpoint's small fields.
//   build/bin/checkpoint_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "common/checkpoint/checkpoint_store.h"
#include "tests/checkpoint/test_checkpoint_data.h"

namespace placeto {
namespace {

std::string scratch(const char* name) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           (std::string("ckpt_bench_") + name + std::to_string(::getpid())))
                              .string();
  std::filesystem::create_directories(dir);
  return dir;
}

void set_bytes(benchmark::State& state, const std::string& path) {
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(std::filesystem::file_size(path)));
}

void BM_WriteCheckpointFile(benchmark::State& state) {
  const std::string dir = scratch("write");
  const CheckpointData d = make_test_checkpoint(1, state.range(0));
  const std::string path = dir + "/ckpt.h5";
  for (auto _ : state) write_checkpoint_file(path, d);
  set_bytes(state, path);
  std::filesystem::remove_all(dir);
}

void BM_ReadCheckpointFile(benchmark::State& state) {
  const std::string dir = scratch("read");
  const std::string path = dir + "/ckpt.h5";
  write_checkpoint_file(path, make_test_checkpoint(1, state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(read_checkpoint_file(path));
  set_bytes(state, path);
  std::filesystem::remove_all(dir);
}

void BM_Publish(benchmark::State& state) {
  const std::string dir = scratch("publish");
  CheckpointStore store(dir, 2);
  CheckpointData d = make_test_checkpoint(1, state.range(0));
  std::string path;
  for (auto _ : state) {
    path = store.publish(d);
    ++d.step;
  }
  set_bytes(state, path);
  std::filesystem::remove_all(dir);
}

BENCHMARK(BM_WriteCheckpointFile)->Arg(1 << 10)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReadCheckpointFile)->Arg(1 << 10)->Arg(1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Publish)->Arg(1 << 10)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace placeto

BENCHMARK_MAIN();
