#!/usr/bin/env bash
# The ThreadSanitizer part of the README's test command (scripts/test.sh calls it): the executor,
# the tuner and the built-in kernels built with clang under ThreadSanitizer into build-tsan/,
# against a oneTBB built the same way (scripts/instrumented_tbb.sh), and their threaded tests run
# there; any report fails it. No report is suppressed: with TBB instrumented there has been no
# false positive to suppress, and oneDNN's OpenMP runtime is not in this build. A race planted in
# tests/threaded/race_canary_test.cc must then be reported, or the check proves nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
# The tests that run code on more than one thread, at their representative shapes.
threaded='Executor.*:Tune.*:GemmF32.Both*:Gemv.Tunes*:GemmF32.PackingBOnFirstUse*:GemmS8*:Gemv/*'

tbb_lib=$(./scripts/instrumented_tbb.sh)
CC=clang CXX=clang++ cmake -S . -B build-tsan -DROOFTUNE_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >/dev/null
cmake --build build-tsan -j"$(nproc)" >&2
bin=build-tsan/tests/threaded/rooftune_threaded_tests
export LD_LIBRARY_PATH="$tbb_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# ldd's output is read whole: under pipefail, `ldd | grep -q` fails when grep's early exit ends
# ldd with SIGPIPE, even with the right library loaded.
if [[ $(ldd "$bin") != *"$tbb_lib/libtbb.so"* ]]; then
  echo "tsan: $bin does not load the instrumented oneTBB in $tbb_lib" >&2
  exit 1
fi
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
echo "tsan: the threaded tests under ThreadSanitizer" >&2
"$bin" --gtest_brief=1 --gtest_filter="$threaded"

log=build-tsan/race_canary.log
if "$bin" --gtest_filter='RaceCanary.*' --gtest_also_run_disabled_tests >"$log" 2>&1 ||
    ! grep -q "ThreadSanitizer: data race" "$log" || ! grep -q "race_canary_test.cc" "$log"; then
  tail -n 40 "$log" >&2
  echo "tsan: the planted race in race_canary_test.cc was not reported: the check is blind" >&2
  exit 1
fi
echo "tsan: no race in the threaded tests; the planted one was reported" >&2
