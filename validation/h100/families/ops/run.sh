#!/usr/bin/env bash
# One device call (2026-12-07, an H100 SXM, right after validation/h200/pipes/run.sh
# on the same warm machine): the operators of validation/h200/ops/ that had
# H200 power rows but none on an H100, captured alone between the streaming
# control (op_add, op_add_end), so validation/h200/pipes/mix.py can set their
# power beside Nsight Compute's per-pipe counts. Read-only NVML.
#   bash validation/h100/families/ops/run.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../../../h200/ops/lib.sh" "$1" caps.log
board
controls capops "maxpool:30 dwconv7_s3:20 dwconv:20 conv1x1:30 to_nhwc:200 vggconv:15"
echo "total $((SECONDS - T0)) s"
pack h100ops
