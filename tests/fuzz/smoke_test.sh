#!/usr/bin/env bash
# CI smoke run of the fuzz targets: configures and builds the "fuzz" preset (clang) in
# build-fuzz/ and runs every target for ~20 s on its committed corpus (launch/fuzz smoke).
# Fails when a target crashes, leaks, hangs or throws anything but a placeto::Error.
# About 5 minutes on a free 2-core machine (build ~3 min, 5 x 20 s of fuzzing).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export PLACETO_NICE=${PLACETO_NICE:-nice -n 19}
export PLACETO_FUZZ_JOBS=${PLACETO_FUZZ_JOBS:-2}
exec "$root/launch/fuzz" smoke
