#!/usr/bin/env bash
# The captures of validation/h100/heldout8/ (docs/validation.md, "Held-out
# workloads, eighth set"): one device call, ~4 min (it asked for an H200 and
# ran on an H100). The streaming control
# (validation/h200/ops/: `add`) before and after, the two new workloads with
# three traced steps each, then Nsight Compute (--clock-control none, one
# step) on the diffusion U-Net's group norm, elementwise, upsampling and
# concatenation kernels (NCU=0: skipped). Read-only NVML.
#   [NCU=0] bash validation/h100/heldout8/run.sh OUTDIR
# Leaves OUTDIR/run.log, OUTDIR/ncu.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../../h200/ops/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60"
cap ddpm_unet_train_b64_64 diffusion-unet-train 90 ddpm_unet_train
cap whisper_small_train_b32 speech-enc-dec-train 120 whisper_train
capx add_end 60 add
if [ "${NCU:-1}" = 1 ]; then  # NCU=0: the captures alone
  ncu_run 150 'norm|elementwise|upsample|CatArray|reduce' "ddpm_unet_train_b64_64=$here/workloads.py:ddpm_unet_train"
  ncu_reduce
fi
pack caps
