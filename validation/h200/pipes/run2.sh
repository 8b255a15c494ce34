#!/usr/bin/env bash
# Second call of this folder (2026-12-07, the same warm H100 as run.sh and
# validation/h100/families/ops/run.sh): run.sh on the operators of
# validation/h200/ops/ whose power the H200 (and, for some, that H100)
# measured alone: convolutions, layout copies, `cat`, pooling.
#   [BUDGET=S] bash validation/h200/pipes/run2.sh OUTDIR   (default 200 s)
# Leaves OUTDIR/pipes2.log, OUTDIR/ncu.log and OUTDIR/pipes2.tar.gz.
NAME=pipes2 BUDGET=${BUDGET:-200} \
  OPS="dwconv conv1x1 to_nhwc vggconv vggconv_relu cat shuffle to_nchw copy dwconv5 dwconv7 transpose" \
  exec bash "$(dirname "${BASH_SOURCE[0]}")/run.sh" "$@"
