#!/usr/bin/env bash
# The captures of validation/h200/heldout6/ (docs/validation.md, "Kernels of
# no known family"): one device call on an H200, ~3 min; three traced steps
# each (capture.py's defaults otherwise). Read-only NVML.
#   bash validation/h200/heldout6/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
cap gnn_sage_train_200k     gnn-train     90 gnn_train
cap deeplabv3_train_b8_256  cnn-train     90 deeplab_train
cap gpt2_sample_b8          decode        120 sample_generate
pack caps
