#!/bin/bash
# Small and skinny fp32 GEMMs: rooftune's initial config against libxsmm and oneDNN, warm, one
# and two threads, through `rooftune bench` (each result a separate run, back to back; each
# run's median of batched calls). Prints one Markdown row per shape and thread count. libxsmm
# runs on one thread at both counts (its threaded GEMM is its OpenMP extension).
#   bench/small_gemm_grid.sh [build dir]     (default: build)
set -euo pipefail
bin="${1:-build}/cli/rooftune"
median_ns() {
  "$bin" bench --kernel "$1" --shape "$2" --threads "$3" --warm --json 2>/dev/null |
    python3 -c 'import json, sys; b = json.load(sys.stdin)["benchmarks"][0]; print("%.0f %s" % (b["real_time"], b["config"]))'
}
echo "| M x N x K | threads | rooftune (ns) | config | libxsmm (ns) | oneDNN (ns) | best other / rooftune |"
echo "|---|---|---|---|---|---|---|"
for shape in 8x8x8 16x16x16 24x24x24 32x32x32 48x48x48 64x64x64 96x96x96 128x128x128 \
             16x256x256 256x16x256 1x512x512 512x1x512; do
  for threads in 1 2; do
    read -r ours config < <(median_ns gemm_f32 "$shape" "$threads")
    read -r xsmm _ < <(median_ns libxsmm_gemm_f32 "$shape" "$threads")
    read -r dnnl _ < <(median_ns onednn_gemm_f32 "$shape" "$threads")
    python3 -c "print('| $shape | $threads | $ours | $config | $xsmm | $dnnl | %.2fx |' % (min($xsmm, $dnnl) / $ours))"
  done
done
