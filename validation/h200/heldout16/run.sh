#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch. On an H100:
# Nsight Compute (--clock-control none) on one repetition of layer norm at
# 64, 96, 384 and 4,096 fp32 features and 96 and 2,048 bf16 features, group
# norm and the streaming `add` (../ops/workloads.py), with thread-level
# instruction counts beside the warp-level ones: how many lanes the
# row-wise norms' instructions keep busy, for their per-row instructions'
# price (docs/validation.md, "Row-wise norms"). Read-only.
#   bash validation/h200/heldout16/run.sh OUTDIR
# Leaves OUTDIR/caps16.log and OUTDIR/caps16.tar.gz (ncu_<tag>.csv.gz, raw).
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps16.log
board
M=gpu__time_duration.sum,sm__inst_executed.sum,sm__sass_thread_inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,sm__sass_thread_inst_executed_op_fp32_pred_on.sum,sm__sass_inst_executed_op_shared.sum,smsp__inst_executed_op_shfl.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size
while IFS=: read -r tag opts; do
  args=()
  IFS=, read -ra kv <<< "$opts"
  for a in "${kv[@]}"; do args+=(--arg "$a"); done
  timeout 40 ncu --clock-control none --profile-from-start off --csv --page raw --print-summary none \
    --metrics "$M" --log-file "$w/ncu_$tag.csv" \
    python3 "$root/traces/capture/capture.py" --workload "$ops_py:op" "${args[@]}" --arg reps=1 \
    --ncu --warmup 3 --out "/tmp/ncu_$tag" > "$w/ncu_$tag.out" 2>&1
  echo "ncu $tag rc=$? at $((SECONDS - T0)) s"
  gzip -9 "$w/ncu_$tag.csv"
done <<'LIST'
ln_fp32_f64:name=layer_norm,rows=262144,features=64,dtype=fp32
ln_fp32_f96:name=layer_norm,rows=174762,features=96,dtype=fp32
ln_fp32_f384:name=layer_norm,rows=43690,features=384,dtype=fp32
ln_fp32_f4096:name=layer_norm,rows=4096,features=4096,dtype=fp32
ln_f96:name=layer_norm,rows=174762,features=96
ln_f2048:name=layer_norm,rows=8192,features=2048
gn_n16_c128:name=group_norm,n=16,c=128,hw=64,groups=32
add:name=add
LIST
echo "total $((SECONDS - T0)) s"
pack caps16
