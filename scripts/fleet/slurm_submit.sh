#!/usr/bin/env bash
# Tunes each machine type of a Slurm cluster once and merges the results, on Slurm itself:
#   scripts/fleet/slurm_submit.sh OUT PARTITION[:NODES]... [-- RUN_FLAGS...]
# For each partition (one machine type each; NODES nodes of it, default 1) a job array runs
# `rooftune run` on whole nodes (slurm_tune.sbatch), each into OUT/db/<node>.db and
# OUT/reports/<node>/; a job that starts when they all succeed merges the databases into
# OUT/fleet.db (merge.sh). OUT must be on a file system every node sees. RUN_FLAGS go to
# `rooftune run` (--quick, say). Environment: ROOFTUNE (the rooftune binary every node runs;
# default: rooftune on PATH), SBATCH_ARGS (extra sbatch options: --account, --time, ...).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if (($# < 2)); then
  echo "usage: $0 OUT PARTITION[:NODES]... [-- RUN_FLAGS...]" >&2
  exit 2
fi
out=$(realpath -m "$1")
shift
partitions=()
while (($#)) && [[ $1 != -- ]]; do partitions+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
run_flags="$*"
mkdir -p "$out/db" "$out/logs"
read -r -a extra <<<"${SBATCH_ARGS:-}"
jobs=()
for entry in "${partitions[@]}"; do
  partition=${entry%%:*}
  nodes=1
  [[ $entry == *:* ]] && nodes=${entry#*:}
  job=$(sbatch --parsable "${extra[@]}" --partition="$partition" --array="0-$((nodes - 1))" \
    --output="$out/logs/tune-%A_%a.out" \
    --export="ALL,OUT=$out,RUN_FLAGS=$run_flags,ROOFTUNE=${ROOFTUNE:-rooftune}" \
    "$here/slurm_tune.sbatch")
  echo "submitted $job: $nodes node(s) of $partition" >&2
  jobs+=("$job")
done
dependency=$(IFS=:; echo "afterok:${jobs[*]}")
merge=$(sbatch --parsable "${extra[@]}" --dependency="$dependency" --ntasks=1 \
  --output="$out/logs/merge-%j.out" --job-name=rooftune-merge \
  --export="ALL,ROOFTUNE=${ROOFTUNE:-rooftune}" \
  --wrap="bash '$here/merge.sh' '$out/fleet.db' '$out'/db/*.db")
echo "submitted $merge: merges into $out/fleet.db when every tune succeeded" >&2
