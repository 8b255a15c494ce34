#!/usr/bin/env bash
# The captures of validation/h200/heldout7/ (docs/validation.md, "Held-out
# workloads, seventh set"): one device call on an H200, ~3 min; three traced
# steps each (capture.py's defaults otherwise). Read-only NVML.
#   bash validation/h200/heldout7/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
cap mc3_18_train_b8              video-cnn-train 60 mc3_train
cap r2plus1d_18_train_b8         video-cnn-train 60 r2plus1d_train
cap unet3d_train_b2_96           volumetric-cnn-train 60 unet3d_train
cap fcn_resnet50_train_b8_256    segmentation-train 60 fcn_train
cap resnet50_fp32_nchw_train_b64 cnn-train-fp32 60 resnet50_fp32_nchw_train
pack caps
