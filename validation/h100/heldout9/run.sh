#!/usr/bin/env bash
# The captures of the ninth held-out set (docs/validation.md, "Held-out
# workloads, ninth set"): one device call, ~1 min (it asked for an H200 and
# ran on an H100). The streaming control (validation/h200/ops/: `add`)
# before and after, two narrow convolution networks with three traced steps
# each. Read-only NVML.
#   bash validation/h100/heldout9/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../../h200/ops/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60"
cap unet3d_w24_train_b1_112 volumetric-cnn-train 90 unet3d_w24_train
cap unet2d_c32_train_b16_256 unet-train 90 unet2d_c32_train
capx add_end 60 add
pack caps
