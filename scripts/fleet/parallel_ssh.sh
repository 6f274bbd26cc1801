#!/usr/bin/env bash
# Tunes several servers over ssh with GNU parallel, then merges their databases here:
#   scripts/fleet/parallel_ssh.sh OUT HOST... [-- RUN_FLAGS...]
# Each host runs `rooftune run` (installed there: ROOFTUNE, default rooftune on its PATH) into a
# database and report folder of its own under REMOTE_DIR (default /tmp/rooftune-fleet); the
# databases and reports are copied back to OUT/db/<host>.db and OUT/reports/<host>/, and merged
# into OUT/fleet.db (merge.sh, with the local rooftune). One host per machine type is enough:
# rows are keyed by machine identity. Needs GNU parallel (apt-get install parallel) and ssh
# access without a password prompt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if (($# < 2)); then
  echo "usage: $0 OUT HOST... [-- RUN_FLAGS...]" >&2
  exit 2
fi
command -v parallel >/dev/null || { echo "parallel_ssh: needs GNU parallel" >&2; exit 1; }
out=$1
shift
hosts=()
while (($#)) && [[ $1 != -- ]]; do hosts+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
run_flags="$*"
remote=${REMOTE_DIR:-/tmp/rooftune-fleet}
rooftune=${ROOFTUNE:-rooftune}
mkdir -p "$out/db" "$out/reports"
# One run per host at a time, all hosts at once; --tag prefixes each line with its host.
parallel --tag --line-buffer -j0 \
  "ssh {} 'mkdir -p $remote && ROOFTUNE_DB=$remote/tuning.db $rooftune run $run_flags --out $remote/report'" \
  ::: "${hosts[@]}"
parallel -j0 "scp -q {}:$remote/tuning.db $out/db/{}.db && scp -q -r {}:$remote/report $out/reports/{}" \
  ::: "${hosts[@]}"
dbs=()
for host in "${hosts[@]}"; do dbs+=("$out/db/$host.db"); done
"$here/merge.sh" "$out/fleet.db" "${dbs[@]}"
