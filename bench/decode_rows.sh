#!/bin/bash
# The decode-shape fp32 GEMM by row count and register block: for M x K x N products of few rows,
# the paired attainment (cold, against the binding ceiling's own loop) of the default config (the
# database's tuned one, else the analytic initial one; an empty ROOFTUNE_DB for the latter) and of
# each blocked micro-kernel run in the few-row order with B prepared (BLIS's loop order, B's
# micro-panel in L1, one row block covering every row). What BlockingForFewRows and
# kFewRowPanelsOfPreparedB were chosen from; rerun it on a new host before changing either.
# Prints one Markdown row per row count and round.
#   bench/decode_rows.sh [build dir] [threads] [rows ...]
#   (defaults: build, 1 thread, rows 8 16 24 32 48 64 96)
# N x K is 4096 x 4096 unless DECODE_NK says otherwise (rooftune's shapes are M x N x K; e.g.
# DECODE_NK=11008x4096); DECODE_ROUNDS rounds (default 2).
set -euo pipefail
bin="${1:-build}/cli/rooftune"
threads="${2:-1}"
shift 2 || shift $# || true
rows=("$@")
[ ${#rows[@]} -eq 0 ] && rows=(8 16 24 32 48 64 96)
nk="${DECODE_NK:-4096x4096}"
rounds="${DECODE_ROUNDS:-2}"

# gemm_f32's parameter domains (MC and NC below).
domains=$("$bin" list --json | python3 -c '
import json, sys
k = next(x for x in json.load(sys.stdin)["kernels"] if x["name"] == "gemm_f32")
print(json.dumps({p["name"]: p["domain"] for p in k["params"]}))')

attainment() {  # shape [config]
  "$bin" bench --kernel gemm_f32 --shape "$1" --threads "$threads" --cold --in-process \
      ${2:+--config "$2"} --json 2>/dev/null |
    python3 -c 'import json, sys
print("%.3f" % json.load(sys.stdin)["benchmarks"][0]["attainment"])' 2>/dev/null || echo "-"
}

# The few-row config of an MR x NR block over m rows: every row in one MC block, the widest NC
# the domain has that NR divides, KC 2048 (deep, as the few-row order's is).
few_row_config() {  # m mr nr
  python3 -c '
import json, sys
d = json.loads(sys.argv[1]); m, mr, nr = map(int, sys.argv[2:5])
mc = min((v for v in d["MC"] if v >= m and v % mr == 0), default=None)
nc = max((v for v in d["NC"] if v % nr == 0 and v <= 6144), default=None)
if mc is None or nc is None: sys.exit(1)
print("PATH=blocked,INNER=ir,PACKA=in_place,PACKB=prepared,PAR=columns,PREFETCHB=l2,"
      "KC=2048,MR=%d,NR=%d,MC=%d,NC=%d" % (mr, nr, mc, nc))' "$domains" "$@"
}

# AVX-512's blocks, then AVX2's; a block this target lacks reads "-".
candidates=(6x64 8x48 12x32 16x16 4x24 6x16 8x8)
header="| M x ${nk} | threads | round | default |"
sep="|---|---|---|---|"
for b in "${candidates[@]}"; do header+=" ${b/x/ x } |"; sep+="---|"; done
echo "$header"
echo "$sep"
for m in "${rows[@]}"; do
  for ((r = 1; r <= rounds; ++r)); do
    line="| $m | $threads | $r | $(attainment "${m}x${nk}") |"
    for b in "${candidates[@]}"; do
      mr=${b%x*}; nr=${b#*x}
      if c=$(few_row_config "$m" "$mr" "$nr"); then
        line+=" $(attainment "${m}x${nk}" "$c") |"
      else
        line+=" - |"
      fi
    done
    echo "$line"
  done
done
