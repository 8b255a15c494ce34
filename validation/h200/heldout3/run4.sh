#!/usr/bin/env bash
# Fourth device call of validation/h200/heldout3/ (~5 min): Nsight Compute
# (--clock-control none) on the depthwise-convolution and batch/layer-norm
# kernels of one EfficientNet-B0 and one ConvNeXt-T step (are the instruction
# rates of MobileNetV3's kernels those of other networks?), then two new
# depthwise networks captured before any rule is chosen from that.
#   bash validation/h200/heldout3/run4.sh OUTDIR
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT="${1:?usage: run4.sh OUTDIR}" BUDGET=330 LIMIT=160 \
  NCU_EXTRA='-k regex:c1_k1|grouped_direct|convolve_common|batch_norm_collect|batch_norm_backward_reduce|layer_norm' \
  bash "$here/../../../traces/capture/run_h200_ncu.sh" \
  "efficientnet_b0_train_b256=$here/workloads.py:efficientnet_train" \
  "convnext_t_train_b64=$here/workloads.py:convnext_train"
source "$here/lib.sh" "$1" run4.log
for f in "$out"/ncu_*.csv; do
  python3 "$root/traces/capture/ncu_reduce.py" "$f" "${f%.csv}.subset.csv.gz" && rm -f "$f"
done
cap mobilenetv2_train_b128  cnn-train 70 mobilenetv2_train
cap shufflenetv2_train_b256 cnn-train 70 shufflenet_train
pack caps4
