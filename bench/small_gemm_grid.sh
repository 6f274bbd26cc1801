#!/bin/bash
# Small and skinny fp32 GEMMs: rooftune's gemm_f32 (its stored config, else the initial one)
# against libxsmm and oneDNN, warm, one and two threads, through `rooftune bench --versus`: each
# competitor validated, then timed in alternating back-to-back pairs with gemm_f32 in the same
# process, the speedup being the median of the per-pair ratios (their time over ours) with its
# quartiles. Prints one Markdown row per shape and thread count. libxsmm runs on one thread at
# both counts (its threaded GEMM is its OpenMP extension).
#   bench/small_gemm_grid.sh [build dir] [shape ...]     (default: build, the grid below)
set -euo pipefail
bin="${1:-build}/cli/rooftune"
shift || true
shapes=("$@")
if [ ${#shapes[@]} -eq 0 ]; then
  shapes=(8x8x8 16x16x16 24x24x24 32x32x32 48x48x48 64x64x64 96x96x96 128x128x128
          16x256x256 256x16x256 1x512x512 512x1x512)
fi
echo "| M x N x K | threads | rooftune (ns) | libxsmm (ns) | oneDNN (ns) | vs libxsmm, paired (quartiles) | vs oneDNN, paired (quartiles) | vs best other | config |"
echo "|---|---|---|---|---|---|---|---|---|"
for shape in "${shapes[@]}"; do
  for threads in 1 2; do
    "$bin" bench --kernel gemm_f32 --shape "$shape" --threads "$threads" --warm \
        --versus libxsmm_gemm_f32,onednn_gemm_f32 --json 2>/dev/null |
      python3 -c '
import json, sys
b = json.load(sys.stdin)["benchmarks"][0]
v = {x["kernel"]: x for x in b["versus"]}
x, d = v["libxsmm_gemm_f32"], v["onednn_gemm_f32"]
cell = lambda s: "%.2fx (%.2f-%.2f)" % (s["speedup"], s["speedup_low"], s["speedup_high"])
print("| %s | %s | %.0f | %.0f | %.0f | %s | %s | %.2fx | `%s` |" % (
    sys.argv[1], sys.argv[2], x["our_real_time"], x["real_time"], d["real_time"], cell(x), cell(d),
    min(x["speedup"], d["speedup"]), b["config"]))' "$shape" "$threads"
  done
done
