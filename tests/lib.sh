# The preamble the shell tests share (tests/**/*.sh).  Source it right after `set ...`:
#   source "$(dirname "$0")/../lib.sh"
# ctest runs each test as SCRIPT BIN_DIR [SOURCE_DIR or a data dir] (placeto_script_test and
# the add_test lines in tests/CMakeLists.txt).  This file sets
#   bin  the first argument: the directory of the built executables
#   src  the source tree this file is in (the SOURCE_DIR ctest passes)
#   py   Debian's Python, the one with matplotlib, h5py and torch (launch/setup)
#   tmp  a fresh temporary directory, removed on exit, also when a test made parts of it
#        read-only; a test that needs more done on exit defines on_exit(), run first
# exports launch/env.sh (mpirun as root, oversubscription, yielding; one BLAS/torch thread per
# process) and keeps the counts of checks with
#   ok [TEXT]      a check passed ("PASS: TEXT" when given a text)
#   bad TEXT       a check failed ("FAIL: TEXT")
#   finish [NAME]  prints "NAME: P passed, F failed"; its status is 0 when none failed, so a
#                  test ends with it.
# shellcheck shell=bash disable=SC2034  # bin, py, passed: for the tests that source it
bin=${1:?usage: $0 BIN_DIR [SOURCE_DIR]}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=/usr/bin/python3
source "$src/launch/env.sh"

tmp=$(mktemp -d)
placeto_test_exit() {  # never fails, also under set -e: the directory always goes
  if declare -F on_exit > /dev/null; then on_exit || true; fi
  chmod -R u+w "$tmp" 2> /dev/null || true
  rm -rf "$tmp"
}
trap placeto_test_exit EXIT

passed=0
failed=0
ok() {
  passed=$((passed + 1))
  if (($#)); then echo "PASS: $*"; fi
}
bad() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}
finish() {
  echo "${1:+$1: }$passed passed, $failed failed"
  ((failed == 0))
}
