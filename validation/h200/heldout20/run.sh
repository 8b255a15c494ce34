#!/usr/bin/env bash
# One device call, whichever GPU is lent. Read-only NVML; Nsight Compute
# with --clock-control none.
#   Both: Nsight Compute on the kernels of one step that the pointwise and
#     reduction rules of 2026-12-06 (late) annotate from their operators now
#     (clamp for ReLU, hard swish and sigmoid, comparisons, argmax, all, any,
#     cumsum), in networks no rate was read from: MobileNetV3-Small
#     (../heldout4), VGG-16 (../heldout3), GPT-2 sampling (../heldout6). The
#     counts are the compiled kernels', the same on an H100 and an H200 (sm_90).
#     (The filter reads the kernels' base names and missed the pointwise
#     ones, all `vectorized_elementwise_kernel`: run2.sh measures them.)
#   H200: first ../heldout10/run.sh's H200 list (the H100's eighth and ninth
#     sets and a Faster R-CNN, never captured on the issue's card) between
#     the streaming control.
#   H100: MobileNetV3-Small and VGG-16 steps between the streaming control.
#   bash validation/h200/heldout20/run.sh OUTDIR
# Leaves OUTDIR/caps20.log and OUTDIR/caps20.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps20.log
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/h200_list.sh"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
v=$root/validation/h200
board
nets() {
  if [[ $gpu == *H200* ]]; then
    h200_list
  else
    capw mobilenetv3_small_train_b256 cnn-train 90 "$v/heldout4/workloads.py:mobilenetv3_small_train"
    capw vgg16_train_b64_adamw cnn-train 90 "$v/heldout3/workloads.py:vgg16_train"
  fi
}
controls nets
echo "captures done at $((SECONDS - T0)) s"
ncu_run 90 'hardswish|hardsigmoid|clamp|threshold' "mobilenetv3_small_train_b256=$v/heldout4/workloads.py:mobilenetv3_small_train"
ncu_run 90 'clamp|threshold|reduce_kernel|max_pool' "vgg16_train_b64_adamw=$v/heldout3/workloads.py:vgg16_train"
ncu_run 60 'reduce_kernel|scan' "gpt2_sample_b8=$v/heldout6/workloads.py:sample_generate"
ncu_reduce "$w"
echo "total $((SECONDS - T0)) s"
pack caps20
