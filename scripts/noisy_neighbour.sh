#!/usr/bin/env bash
# The noisy-neighbour check at full length (the test suite's NoisyNeighbour tests are its short
# form): a CPU hog pinned to the last CPU for part of a full probe and part of `rooftune run
# --quick`'s tunes, against a database of its own. Prints the probe's self-checks beside an
# undisturbed probe's ceilings, and fails (exit 1) when any verdict in the report is impossible.
#
#   ./scripts/noisy_neighbour.sh [SECONDS_OF_HOG]     (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
hog_seconds=${1:-20}
bin=$PWD/build/cli/rooftune
work=$(mktemp -d)
export ROOFTUNE_DB=$work/noisy.db
cpu=$(( $(nproc) - 1 ))
hog() {  # hog DELAY SECONDS: spin on the last CPU from DELAY seconds on, for SECONDS
  (sleep "$1"; exec taskset -c "$cpu" timeout "$2" sh -c 'while :; do :; done') &
}
echo "noisy-neighbour: undisturbed full probe" >&2
"$bin" probe --fresh --out "$work/quiet" > "$work/quiet.txt"
echo "noisy-neighbour: full probe with a hog on CPU $cpu from 2 s for $hog_seconds s" >&2
hog 2 "$hog_seconds"
"$bin" probe --force --out "$work/noisy" > "$work/noisy.txt"
wait
echo "noisy-neighbour: rooftune run --quick with a hog from 10 s for $hog_seconds s" >&2
hog 10 "$hog_seconds"
(cd "$work" && "$bin" run --quick --out "$work/report" > "$work/run.txt")
wait
for probe in quiet noisy; do
  echo "== $probe probe: peak compute and self-checks"
  sed -n '/^peak compute/,/^$/p; /^self-checks/,/^$/p' "$work/$probe.txt"
done
echo "== run --quick summary"
sed -n '/^summary/,$p' "$work/run.txt"
if grep -q '"verdict": "impossible"' "$work/report/report.json"; then
  echo "noisy-neighbour: FAILED: an impossible verdict (see $work/report/report.md)" >&2
  exit 1
fi
echo "noisy-neighbour: no impossible verdict; everything is in $work" >&2
