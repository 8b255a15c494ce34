#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch. On an H100:
# the row-wise norms across row widths (../ops/workloads.py: layer norm in
# bf16 at 256 to 8,192 features and in fp32 at 768 and 4,096, RMS norm in
# bf16 at 2,048 and 4,096, group norm at a second shape), each captured
# beside the streaming control (`add`, before and after), then Nsight
# Compute (--clock-control none) on one repetition of each: the warp
# instructions per element a shape rule for the norm family is fitted on
# and held out against. Read-only NVML.
#   bash validation/h200/heldout14/run.sh OUTDIR
# Leaves OUTDIR/caps14.log, OUTDIR/ncu.log and OUTDIR/caps14.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps14.log
board
# TAG:REPS:OPTIONS (16.8M elements each, so the kernels are long enough to
# measure; the options as ../ops/workloads.py's op takes them).
norms="ln_f256:20:name=layer_norm,rows=65536,features=256
ln_f768:20:name=layer_norm,rows=21845,features=768
ln_f2048:20:name=layer_norm,rows=8192,features=2048
ln_f4096:20:name=layer_norm,rows=4096,features=4096
ln_f8192:20:name=layer_norm,rows=2048,features=8192
ln_fp32_f768:20:name=layer_norm,rows=21845,features=768,dtype=fp32
ln_fp32_f4096:20:name=layer_norm,rows=4096,features=4096,dtype=fp32
rms_f2048:20:name=rms_norm,rows=8192,features=2048
rms_f4096:20:name=rms_norm,rows=4096,features=4096
gn_n16_c128:20:name=group_norm,n=16,c=128,hw=64,groups=32"
capops "add:60"
ncus=()
while IFS=: read -r tag reps opts; do
  IFS=, read -ra kv <<< "$opts"
  name=${kv[0]#name=}
  capx "$tag" "$reps" "$name" "${kv[@]:1}"
  ncus+=("$(ncu_op_spec "$tag" "${opts#name=}")")
done <<< "$norms"
capx add_end 60 add
echo "captures done at $((SECONDS - T0)) s"
mkdir -p "$w/ncu_raw"
OUT="$w/ncu_raw" BUDGET=$((560 - (SECONDS - T0))) LIMIT=40 bash "$root/traces/capture/run_h200_ncu.sh" "${ncus[@]}"
ncu_reduce
echo "total $((SECONDS - T0)) s"
pack caps14
