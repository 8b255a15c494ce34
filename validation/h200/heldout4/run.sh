#!/usr/bin/env bash
# The captures of validation/h200/heldout4/ (docs/validation.md, "Held-out
# workloads, fourth set"): one device call on an H200, ~3 min; three traced
# steps each (capture.py's defaults otherwise, 0.35 s of profiler warm-up
# included).
#   bash validation/h200/heldout4/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run.log
# cap (lib.sh) takes its builders from $here/workloads.py: this folder's.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
cap mnasnet_train_b128           cnn-train 80 mnasnet_train
cap mobilenetv3_small_train_b256 cnn-train 80 mobilenetv3_small_train
cap regnety800mf_train_b128      cnn-train 80 regnety_train
cap efficientnet_b2_train_b96    cnn-train 80 efficientnet_b2_train
pack caps
