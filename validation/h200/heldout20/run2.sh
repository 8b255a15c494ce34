#!/usr/bin/env bash
# Second device call of this folder (either GPU): Nsight Compute
# (--clock-control none) on the clamp, hard swish and hard sigmoid kernels of
# one MobileNetV3-Small step and the ReLU kernels (clamp, threshold) of one
# VGG-16 step. run.sh's filter missed them: ncu's -k matches the function's
# base name, `vectorized_elementwise_kernel` for every ATen pointwise kernel;
# here it matches the demangled name, which holds the functor.
#   bash validation/h200/heldout20/run2.sh OUTDIR
# Leaves OUTDIR/ncu2.log and OUTDIR/ncu2.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" ncu2.log
v=$root/validation/h200
board
NCU_NAME_BASE=demangled ncu_run 150 'hardswish|hardsigmoid|clamp' "mobilenetv3_small_train_b256=$v/heldout4/workloads.py:mobilenetv3_small_train"
NCU_NAME_BASE=demangled ncu_run 120 'clamp|threshold' "vgg16_train_b64_adamw=$v/heldout3/workloads.py:vgg16_train"
ncu_reduce "$w"
echo "total $((SECONDS - T0)) s"
pack ncu2
