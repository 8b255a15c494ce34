#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch. On an H100:
# the layer-norm rule of traces/annotate.cpp (norm_instructions, fitted on
# ../heldout14's sweep at 256-8,192 features) checked below its fit, where
# channels-last networks normalise 96-768 channels: layer norm in fp32 (as
# autocast runs it) at 64, 96, 192 and 384 features and in bf16 at 96 and 384,
# each captured beside the streaming control, with Nsight Compute on one
# repetition of each; then Nsight Compute on the layer-norm kernels of one
# step of ConvNeXt-T and Swin-T as captured in ../heldout3 and ../heldout5.
# Read-only NVML.
#   bash validation/h200/heldout15/run.sh OUTDIR
# Leaves OUTDIR/caps15.log, OUTDIR/ncu.log and OUTDIR/caps15.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps15.log
board
norms="ln_fp32_f64:20:name=layer_norm,rows=262144,features=64,dtype=fp32
ln_fp32_f96:20:name=layer_norm,rows=174762,features=96,dtype=fp32
ln_fp32_f192:20:name=layer_norm,rows=87381,features=192,dtype=fp32
ln_fp32_f384:20:name=layer_norm,rows=43690,features=384,dtype=fp32
ln_f96:20:name=layer_norm,rows=174762,features=96
ln_f384:20:name=layer_norm,rows=43690,features=384"
capops "add:60"
ncus=()
while IFS=: read -r tag reps opts; do
  IFS=, read -ra kv <<< "$opts"
  capx "$tag" "$reps" "${kv[0]#name=}" "${kv[@]:1}"
  ncus+=("$(ncu_op_spec "$tag" "${opts#name=}")")
done <<< "$norms"
capx add_end 60 add
echo "captures done at $((SECONDS - T0)) s"
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=100 LIMIT=40 bash "$root/traces/capture/run_h200_ncu.sh" "${ncus[@]}"
mv "$w/ncu_raw/run.log" "$w/ncu_ops.log"
h=$root/validation/h200
ncu_run 150 'layer_norm|GammaBeta' "convnext_t_train_b64=$h/heldout3/workloads.py:convnext_train"
mv "$w/ncu_raw/run.log" "$w/ncu_convnext.log"
ncu_run 150 'layer_norm|GammaBeta' "swin_t_train_b64=$h/heldout5/workloads.py:swin_train"
cat "$w/ncu_ops.log" "$w/ncu_convnext.log" >> "$w/ncu_raw/run.log"
ncu_reduce
echo "total $((SECONDS - T0)) s"
pack caps15
