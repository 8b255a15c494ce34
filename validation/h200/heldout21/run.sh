#!/usr/bin/env bash
# One device call. On an H200: ../heldout10/run.sh's H200 branch (the H100's
# held-out classes on the issue's card). Elsewhere: the upsampling and roll
# rules of traces/annotate.cpp (upsample_work, roll_work), fitted on the
# networks' kernels, held out on shapes, dtypes and layouts they were not
# fitted on: 2-D nearest, bilinear and bicubic (bicubic's rate is an
# assumption) on bf16 NCHW and channels-last tensors, and a roll of fp32
# (../ops/workloads.py: upsample2d, roll), each captured alone between the
# streaming control, then Nsight Compute on one repetition of each.
# Read-only NVML.
#   bash validation/h200/heldout21/run.sh OUTDIR
# Leaves OUTDIR/caps21.log and OUTDIR/caps21.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps21.log
board
ups() {
  capx up2d_near 100 upsample2d mode=nearest
  capx up2d_near_cl 100 upsample2d mode=nearest cl=1
  capx up2d_bil 60 upsample2d mode=bilinear
  capx up2d_bil_cl 60 upsample2d mode=bilinear cl=1
  capx up2d_bic 30 upsample2d mode=bicubic
  capx roll_fp32 100 roll dtype=fp32
}
controls ups
echo "captures done at $((SECONDS - T0)) s"
ncuops "up2d_near=upsample2d,mode=nearest up2d_near_cl=upsample2d,mode=nearest,cl=1 up2d_bil=upsample2d,mode=bilinear up2d_bil_cl=upsample2d,mode=bilinear,cl=1 up2d_bic=upsample2d,mode=bicubic roll_fp32=roll,dtype=fp32" 200
echo "total $((SECONDS - T0)) s"
pack caps21
