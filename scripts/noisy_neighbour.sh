#!/usr/bin/env bash
# The noisy-neighbour check at full length (the test suite's NoisyNeighbour tests are its short
# form): a CPU hog pinned to the last CPU for part of a full probe and part of `rooftune run
# --quick`'s tunes, each against a database of its own. Prints the probe's self-checks, compares
# every compute and DRAM ceiling the disturbed probe stored with those of undisturbed probes taken
# just before and just after it (a shared host's DRAM bandwidth drifts 15-20% within minutes by
# itself, which one undisturbed probe would blame on the hog), and fails (exit 1) when a ceiling
# lies more than 10% outside the undisturbed probes' range or any verdict in the report is
# impossible.
#
#   ./scripts/noisy_neighbour.sh [SECONDS_OF_HOG]     (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
hog_seconds=${1:-20}
bin=$PWD/build/cli/rooftune
work=$(mktemp -d)
cpu=$(( $(nproc) - 1 ))
hog() {  # hog DELAY SECONDS: spin on the last CPU from DELAY seconds on, for SECONDS
  (sleep "$1"; exec taskset -c "$cpu" timeout "$2" sh -c 'while :; do :; done') &
}
echo "noisy-neighbour: undisturbed full probe (before)" >&2
ROOFTUNE_DB=$work/quiet.db "$bin" probe --fresh --out "$work/quiet" > "$work/quiet.txt"
echo "noisy-neighbour: full probe with a hog on CPU $cpu from 2 s for $hog_seconds s" >&2
hog 2 "$hog_seconds"
# --fresh into a database of its own: the disturbed probe's own figures, not the best of both.
ROOFTUNE_DB=$work/noisy.db "$bin" probe --fresh --out "$work/noisy" > "$work/noisy.txt"
wait
echo "noisy-neighbour: undisturbed full probe (after)" >&2
ROOFTUNE_DB=$work/after.db "$bin" probe --fresh --out "$work/after" > "$work/after.txt"
echo "noisy-neighbour: rooftune run --quick with a hog from 10 s for $hog_seconds s" >&2
hog 10 "$hog_seconds"
(cd "$work" && ROOFTUNE_DB=$work/run.db "$bin" run --quick --out "$work/report" > "$work/run.txt")
wait
for probe in quiet noisy after; do
  echo "== $probe probe: peak compute and self-checks"
  sed -n '/^peak compute/,/^$/p; /^self-checks/,/^$/p' "$work/$probe.txt"
done
echo "== ceilings the disturbed probe stored against the undisturbed probes' (compute, DRAM read)"
moved=0
python3 - "$work/quiet/profile.json" "$work/noisy/profile.json" "$work/after/profile.json" \
  <<'PY' || moved=1
import json, sys
def ceilings(path):
    out = {}
    for c in json.load(open(path))["ceilings"]:
        if c["kind"] == "compute" or (c.get("level") == "DRAM" and c["source"] == "read"):
            key = (c["kind"], c.get("level") or c.get("dtype"), c["source"], c["threads"])
            out[key] = c["per_second"]
    return out
before, noisy, after = (ceilings(path) for path in sys.argv[1:4])
print(f"  {'ceiling':56s} {'disturbed/before':>16s} {'after/before':>13s}  outside the range")
worst = 0
for key in sorted(before):
    if key not in noisy or key not in after:
        continue
    low, high = min(before[key], after[key]), max(before[key], after[key])
    # How far the disturbed figure lies outside the undisturbed ones, relative to the nearer.
    outside = max(low / noisy[key] - 1 if noisy[key] < low else 0,
                  noisy[key] / high - 1 if noisy[key] > high else 0)
    worst = max(worst, outside)
    print(f"  {' '.join(str(k) for k in key):56s} {noisy[key] / before[key]:16.3f} "
          f"{after[key] / before[key]:13.3f}  {outside:6.1%}{'  MOVED' if outside > 0.10 else ''}")
print(f"  largest move outside the undisturbed range {worst:.1%} (allowed 10%)")
sys.exit(1 if worst > 0.10 else 0)
PY
echo "== run --quick summary"
sed -n '/^summary/,$p' "$work/run.txt"
if grep -q '"verdict": "impossible"' "$work/report/report.json"; then
  echo "noisy-neighbour: FAILED: an impossible verdict (see $work/report/report.md)" >&2
  exit 1
fi
if ((moved)); then
  echo "noisy-neighbour: FAILED: a ceiling moved more than 10% (see $work)" >&2
  exit 1
fi
echo "noisy-neighbour: no impossible verdict, ceilings within 10%; everything is in $work" >&2
