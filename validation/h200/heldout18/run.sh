#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch. On an H100:
# Nsight Compute (--clock-control none) on one repetition of layer norm
# with rows of 8 and 16 KB at several row counts (../ops/workloads.py), for
# when its kernels read a row twice from DRAM: the input-gradient kernel
# moved 1.33x its three passes at 8 KB rows and 1.67x at 16 KB on ~16.8M
# elements (docs/validation.md, "Row-wise norms"); whether that follows the
# row's size or the footprint of the rows resident at once decides the rule.
# Read-only.
#   bash validation/h200/heldout18/run.sh OUTDIR
# Leaves OUTDIR/caps18.log, OUTDIR/ncu.log and OUTDIR/caps18.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps18.log
board
ncus=()
for spec in 4096:512 4096:1024 4096:16384 8192:256 8192:1024 8192:8192; do
  f=${spec%%:*} r=${spec#*:}
  ncus+=("$(ncu_op_spec "ln_f${f}_r${r}" "layer_norm,rows=$r,features=$f")")
done
for spec in 2048:1024 2048:8192 2048:32768; do
  f=${spec%%:*} r=${spec#*:}
  ncus+=("$(ncu_op_spec "ln_fp32_f${f}_r${r}" "layer_norm,rows=$r,features=$f,dtype=fp32")")
done
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=200 LIMIT=40 bash "$root/traces/capture/run_h200_ncu.sh" "${ncus[@]}"
ncu_reduce
echo "total $((SECONDS - T0)) s"
pack caps18
