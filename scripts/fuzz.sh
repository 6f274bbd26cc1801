#!/usr/bin/env bash
# The sanitizer and fuzzing part of the README's test command (scripts/test.sh calls it): the
# framework, the built-in kernels and their unit tests built with clang under AddressSanitizer and
# UBSan (UB is an error; kernel sweeps at representative shapes),
# then each libFuzzer target for ROOFTUNE_FUZZ_SECONDS (default 20) from its seed corpus in
# tests/fuzz/corpus/. New inputs go to build-fuzz/corpus/, never into the source tree. Needs the
# packages scripts/setup.sh --tests installs (clang, libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${ROOFTUNE_FUZZ_SECONDS:-20}
targets=(workload config flags profile export db_row)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DROOFTUNE_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >/dev/null
cmake --build build-fuzz -j"$(nproc)" >&2
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "fuzz: the framework's and the kernels' unit tests under ASan+UBSan" >&2
./build-fuzz/tests/sanitized/rooftune_sanitized_tests --gtest_brief=1
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz: $t, ${seconds} s" >&2
  if ! "./build-fuzz/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=4096 -artifact_prefix=build-fuzz/ "build-fuzz/corpus/$t" \
      "tests/fuzz/corpus/$t" 2>"build-fuzz/$t.log"; then
    tail -n 40 "build-fuzz/$t.log" >&2
    echo "fuzz: $t failed (the input is in build-fuzz/, named crash-* or timeout-*)" >&2
    exit 1
  fi
done
echo "fuzz: ${#targets[@]} targets, ${seconds} s each: no crash, no failed property" >&2
