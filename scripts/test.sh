#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite through ctest, then the
# framework's unit tests under ASan+UBSan and the fuzz targets (scripts/fuzz.sh), then the
# threaded tests under ThreadSanitizer (scripts/tsan.sh). Arguments go to ctest (`-R Tune` runs
# only those; the sanitizer and fuzz part then is skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --tests
(cd build && ctest --output-on-failure -j"$(nproc)" "$@")
if (($# == 0)); then
  ./scripts/fuzz.sh
  ./scripts/tsan.sh
fi
