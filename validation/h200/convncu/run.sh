#!/usr/bin/env bash
# One device call (~9 min): Nsight Compute (--clock-control none, one step
# after three warm-up steps, L2 flushed per kernel) on the tensor-core
# convolution kernels (cuDNN's fprop, dgrad and wgrad passes) of eight
# earlier captures whose convolutions no Nsight Compute run had counted:
# the wide 3x3 layers of VGG-16 and the inference networks, the channels-last
# training steps, and a grouped and a densely concatenated network. Their
# warp instructions are what docs/validation.md, "Instructions of the
# tensor-core convolutions", compares the estimate with.
#   bash validation/h200/convncu/run.sh OUTDIR
# Leaves OUTDIR/run.log, OUTDIR/ncu.log and OUTDIR/ncu.tar.gz
# (ncu_<tag>.subset.csv.gz each).
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
v=$here/..
conv='fprop|dgrad|wgrad'
ncu_run 85 "$conv" "vgg16_train_b64_adamw=$v/heldout3/workloads.py:vgg16_train"
ncu_run 60 "$conv" "resnet152_infer_b256=$v/heldout3/workloads.py:resnet152_infer"
ncu_run 55 "$conv" "wide_resnet50_infer_fp16_b128=$v/heldout5/workloads.py:wide_resnet_infer_fp16"
ncu_run 60 "$conv" "resnet18_train_b32=$v/heldout2/workloads.py:resnet18_train"
ncu_run 60 "$conv" "unet_train_b8_128=$v/heldout2/workloads.py:unet_train"
ncu_run 60 "$conv" "regnety800mf_train_b128=$v/heldout4/workloads.py:regnety_train"
ncu_run 70 "$conv" "densenet121_train_b64=$v/heldout5/workloads.py:densenet_train"
ncu_reduce
pack ncu
