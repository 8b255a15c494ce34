#!/usr/bin/env bash
# The captures of validation/h200/heldout3/ (docs/validation.md, "Held-out
# workloads, third set"): one device call on an H200, ~3 min. Usage, from the
# repository root:
#   bash validation/h200/heldout3/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML; no clock, limit
# or mode is changed.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" run.log
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,power.draw,temperature.gpu --format=csv
python3 -c "import torch, torchvision, transformers; print(torch.__version__, torchvision.__version__, transformers.__version__)"
cap convnext_t_train_b64           cnn-train      80 convnext_train
cap efficientnet_b0_train_b256     cnn-train      80 efficientnet_train
cap vgg16_train_b64                cnn-train      80 vgg16_train --arg sgd=1  # diverges: run2.sh
cap resnet152_infer_b256           cnn-infer      70 resnet152_infer
cap neox_train_b16_t512            decoder-train  90 neox_train
cap bert_large_infer_fp16_b32_t512 encoder-infer  70 bert_large_infer_fp16
pack caps
