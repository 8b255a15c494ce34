#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch (the H100's
# eighth and ninth sets and a Faster R-CNN, never captured on an H200). On an
# H100: Nsight Compute (--clock-control none, one step after three warm-up
# steps) on the fp32 LSTM of ../heldout/ (every kernel: instructions and
# DRAM bytes of cuDNN's recurrent kernels, whose power the replay
# under-prices) and on the diffusion U-Net of validation/h100/heldout8/ (its
# memory-bound families), as much as the budget allows. Read-only.
#   bash validation/h200/heldout12/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" run.log
board
v=$root/validation
ncu_run 260 '' "lstm_train_b64_t128=$v/h200/heldout/workloads.py:lstm_train"
ncu_run 230 'norm|elementwise|upsample|CatArray|reduce' "ddpm_unet_train_b64_64=$v/h100/heldout8/workloads.py:ddpm_unet_train"
ncu_reduce
echo "total $((SECONDS - T0)) s"
pack caps
