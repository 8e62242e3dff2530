#!/usr/bin/env bash
# On a GPU machine: builds the communication tests (no torch) and checks the NCCL backend
#  1. a 1-rank NCCL all-reduce equals the MPI backend bit for bit (sum and mean, float and
#     double, 1 to 10^6 elements) -- NcclVsMpi.OneRankResultsAreBitEqual;
#  2. the conformance suite on NCCL with 1 rank, and with one rank per GPU when there are
#     several;
#  3. the all-reduce benchmark on NCCL (rows for docs/PERFORMANCE.md "All-reduce").
# PLACETO_REQUIRE_GPU=1 makes "no GPU" a failure instead of a skip.
#
# Usage: launch/check_nccl.sh [build-dir]      (default: build-nccl; JOBS=N for make -j)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-nccl}
jobs=${JOBS:-$(nproc)}

cmake -S "$root" -B "$build" -DPLACETO_WITH_TORCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
make -C "$build" -j"$jobs" comm_mpi_test comm_allreduce_bench

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export PLACETO_REQUIRE_GPU=1
filter='NcclVsMpi.*:AllCases/MpiConformance.Nccl/*'

echo "== 1 rank: NCCL vs MPI bit equality and NCCL conformance"
mpirun --oversubscribe -np 1 "$build/bin/comm_mpi_test" --gtest_filter="$filter"

gpus=0
if command -v nvidia-smi >/dev/null; then gpus=$(nvidia-smi -L | grep -c '^GPU' || true); fi
if [ "$gpus" -gt 1 ]; then
  echo "== $gpus ranks, one per GPU: NCCL conformance"
  mpirun --oversubscribe -np "$gpus" "$build/bin/comm_mpi_test" \
    --gtest_filter='AllCases/MpiConformance.Nccl/*'
fi

echo "== all-reduce latency, NCCL vs MPI (1 rank)"
mpirun --oversubscribe -np 1 "$build/bin/comm_allreduce_bench" --backend nccl
mpirun --oversubscribe -np 1 "$build/bin/comm_allreduce_bench" --backend mpi --no-header
echo "check_nccl: OK"
