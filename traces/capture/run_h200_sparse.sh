#!/usr/bin/env bash
# The captures of validation/h200/sparse/ (docs/validation.md, "Short kernels
# between idle gaps"): one device call, ~155 s on the H200. Usage:
#   bash traces/capture/run_h200_sparse.sh OUTDIR
# Read-only NVML; no clock, limit or mode is changed.
set -u
out="${1:?usage: run_h200_sparse.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cap() {
  local tag="$1"
  shift
  if python3 "$here/capture.py" --workload sparse_kernels --out "$out" --tag "$tag" --class sparse \
    --window-s 2.5 --warmup 3 "$@" >"$out/$tag.log" 2>&1; then
    echo "ok $tag"
  else
    echo "FAIL $tag"
    tail -5 "$out/$tag.log"
  fi
}
gemm() { cap "gemm$1x$2x$3_p$4" --arg op=gemm --arg m="$1" --arg n="$2" --arg k="$3" --arg period_us="$4"; }
gemm 512 1024 1024 0
gemm 512 1024 1024 30
gemm 512 1024 1024 200
gemm 512 4096 1024 0
gemm 512 4096 1024 50
gemm 2048 2048 2048 0
gemm 2048 2048 2048 100
cap mul8MB_p0 --arg op=mul --arg mb=8 --arg period_us=0
cap mul8MB_p30 --arg op=mul --arg mb=8 --arg period_us=30
cap mul256MB_p0 --arg op=mul --arg mb=256 --arg period_us=0 --arg count=50
cap mul256MB_p500 --arg op=mul --arg mb=256 --arg period_us=500 --arg count=50
