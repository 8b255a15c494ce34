#!/usr/bin/env bash
# One device call, whichever GPU is lent. Read-only NVML.
#   1. models/calibration/h200/run_toggle.sh: the `toggle` suite of
#      microbench.py (docs/calibration.md, "Bits on the memory bus").
#   2. On an H200 only: ../heldout10/run.sh, whose H200 branch captures the
#      streaming control (../ops: `add`) before and after
#      ../heldout10/h200_list.sh (a diffusion U-Net, a Whisper-shaped model,
#      two narrow U-Nets and a Faster R-CNN: classes captured on H100
#      boards, never on an H200), three traced steps each.
#   bash validation/h200/heldout22/run.sh OUTDIR
# Leaves OUTDIR/toggle/{toggle.log,toggle.tar.gz} and, on an H200,
# OUTDIR/caps/{run.log,caps.tar.gz}.
set -u
out="${1:?usage: run.sh OUTDIR}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/../../../models/calibration/h200/run_toggle.sh" "$out/toggle"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash "$here/../heldout10/run.sh" "$out/caps"
fi
