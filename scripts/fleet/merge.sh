#!/usr/bin/env bash
# Merges the tuning databases one rooftune run per node wrote into one fleet database:
#   scripts/fleet/merge.sh FLEET.db NODE1.db NODE2.db ...
# Rows are keyed by machine identity, so nodes of one type share rows (the faster per key wins)
# and nodes of different types keep theirs side by side. Ship FLEET.db with an application and
# open it with the library API (ContextOptions::database): each machine picks its own rows.
# Environment: ROOFTUNE (default: rooftune on PATH).
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 FLEET.db NODE.db..." >&2
  exit 2
fi
rooftune=${ROOFTUNE:-rooftune}
fleet=$1
shift
for db in "$@"; do
  if [[ ! -f $db ]]; then
    echo "merge: no database $db (did that node's run fail?)" >&2
    exit 1
  fi
  "$rooftune" db merge "$db" --db "$fleet"
done
"$rooftune" db list --db "$fleet"
