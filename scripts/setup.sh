#!/usr/bin/env bash
# Shared, idempotent set-up for both README commands on Debian 12: installs only the Debian
# packages that are missing, then configures and builds rooftune (Release) in build/.
# --tests adds what only the test suite needs (a headless browser for the report's check, clang
# and its sanitizer and libFuzzer runtimes for scripts/fuzz.sh and scripts/tsan.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake g++ make
  libhwy-dev libtbb-dev libdnnl-dev ocl-icd-opencl-dev opencl-c-headers libpfm4-dev
  libbenchmark-dev libabsl-dev nlohmann-json3-dev libsqlite3-dev libgtest-dev
  valgrind  # the simulated counter backend
  libopenblas-dev libblis-dev  # the benchmarks' competitors, opened at run time
  libxsmm-dev  # the small-matrix baseline (libxsmm_gemm_f32)
  libbenchmark-tools python3-scipy  # Google Benchmark's compare.py, which reads our JSON
)
if [[ "${1:-}" == "--tests" ]]; then
  packages+=(chromium)  # renders report.html in the browser test
  packages+=(clang libclang-rt-14-dev)  # scripts/fuzz.sh: ASan, UBSan and libFuzzer; TSan
  packages+=(curl xz-utils)  # scripts/instrumented_tbb.sh fetches oneTBB's source from Debian
fi
missing=()
for p in "${packages[@]}"; do
  # No `| grep -q` under pipefail: grep leaving early can end the writer with SIGPIPE.
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  if [[ $(id -u) -eq 0 ]]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >&2
