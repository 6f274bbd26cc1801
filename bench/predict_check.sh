#!/usr/bin/env bash
# Checks `rooftune predict` against measurement: tunes the layer shapes of an MLP (f32 and u8s8,
# batch 1 and 64, 1 and 2 threads: the GEMV and GEMM of each layer), then predicts each pass and
# measures it (--measure). Run from the repository root after ./scripts/setup.sh; the tuning
# database is the CLI's ($ROOFTUNE_DB, ...), probed first if it has no profile.
#   bench/predict_check.sh [WIDTHS] [BUDGET_SECONDS] [DTYPES]
# (defaults 4096,16384,4096, 10 and f32,u8s8). Pick widths whose weights exceed the host's last
# level cache several times over when the probe cannot see that level (a VM's share of a shared
# L3): the model charges DRAM for what the hidden level holds between passes.
set -euo pipefail
widths=${1:-4096,16384,4096}
budget=${2:-10}
IFS=, read -r -a dtypes <<<"${3:-f32,u8s8}"
rooftune=${ROOFTUNE:-build/cli/rooftune}
IFS=, read -r -a w <<<"$widths"
for dtype in "${dtypes[@]}"; do
  if [[ $dtype == f32 ]]; then gemv=gemv_f32 gemm=gemm_f32; else gemv=gemv_u8s8 gemm=gemm_s8; fi
  for ((i = 0; i + 1 < ${#w[@]}; i++)); do
    epilogue=bias_relu
    ((i + 2 == ${#w[@]})) && epilogue=bias
    "$rooftune" tune --kernel $gemv --dtype $dtype --shape "${w[i+1]}x${w[i]}" \
      --epilogue $epilogue --threads 1,2 --budget-seconds "$budget"
    "$rooftune" tune --kernel $gemm --dtype $dtype --shape "64x${w[i+1]}x${w[i]}" \
      --epilogue $epilogue --threads 1,2 --budget-seconds "$budget"
  done
done
for dtype in "${dtypes[@]}"; do
  for threads in 1 2; do
    "$rooftune" predict --mlp "$widths" --batch 1,64 --dtype $dtype --threads $threads \
      --measure --repeat 10
  done
done
