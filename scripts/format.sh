#!/usr/bin/env bash
# Formats every C++ file git tracks with .clang-format (Google style, 100 columns), or with
# --check lists the files that differ and exits 1 when any does. Needs clang-format (Debian's).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ "${1:-}" == "--check" ]]; then
  differ=0
  for f in "${files[@]}"; do
    if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
      echo "not formatted: $f"
      differ=1
    fi
  done
  exit "$differ"
fi
clang-format -i "${files[@]}"
