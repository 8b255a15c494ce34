#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch. On an H100:
# Nsight Compute (--clock-control none, one step after three warm-up steps,
# caches flushed per kernel) on cuDNN's gate kernels of the fp32 GRU of
# ../heldout2/ (`-k regex:elemWise|elementWise`), the held-out check of the
# recurrent layer's gate-kernel bytes, derived from an LSTM (G = 4) and here
# met with G = 3. Read-only.
#   bash validation/h200/heldout13/run.sh OUTDIR
# Leaves OUTDIR/run.log, OUTDIR/ncu.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" run.log
board
ncu_run 420 'elemWise|elementWise' "gru_train_b32_t256=$root/validation/h200/heldout2/workloads.py:gru_train"
ncu_reduce
pack caps
