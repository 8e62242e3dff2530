#!/usr/bin/env bash
# CI smoke run of the fuzz targets (CTest fuzz_smoke, label sanitize): configures and builds
# the "fuzz" preset (clang) in build-fuzz/ and runs every target for PLACETO_FUZZ_SMOKE_S
# seconds (default 10) on its committed corpus (launch/fuzz SECONDS).  Fails when a target
# crashes, leaks, hangs or throws anything but a placeto::Error.  Cost: docs/TESTING.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export PLACETO_NICE=${PLACETO_NICE:-nice -n 19}
export PLACETO_FUZZ_JOBS=${PLACETO_FUZZ_JOBS:-2}
exec "$root/launch/fuzz" "${PLACETO_FUZZ_SMOKE_S:-10}"
