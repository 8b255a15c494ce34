#!/usr/bin/env bash
# Second call of this folder (2026-12-07, the same warm H100 as run.sh and
# h100ops.sh): each pipe's warp instructions on the operators of
# validation/h200/ops/ whose power the H200 (and, h100ops.sh, this H100)
# measured alone: convolutions, layout copies, pooling.
#   [BUDGET=S] bash validation/h200/pipes/run2.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" pipes2.log
board
export NCU_PIPES=1
ncuops "dwconv conv1x1 to_nhwc vggconv vggconv_relu cat shuffle to_nchw copy dwconv5 dwconv7 transpose" "${BUDGET:-200}"
echo "total $((SECONDS - T0)) s"
pack pipes2
