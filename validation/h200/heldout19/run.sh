#!/usr/bin/env bash
# One device call. On an H200: ../heldout10/run.sh's H200 branch (the H100's
# held-out classes on the issue's card). On an H100: the 3-D U-Net's kernel
# families alone at its own shapes (../ops/workloads.py: batch norm NCDHW,
# trilinear upsampling, the 3x3x3 convolution with cuDNN's layout transforms;
# batch 1, 24-96 channels, 28^3-112^3), between the streaming control, then
# Nsight Compute on one repetition of each: the 3-D U-Net read 8-17 points
# below its board's control on the H100 (validation/h100/heldout9), and this
# splits that between its families. Read-only NVML.
#   bash validation/h200/heldout19/run.sh OUTDIR
# Leaves OUTDIR/caps19.log and OUTDIR/caps19.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps19.log
board
fams() {
  capx bn3d_c24_112 12 bn_nchw c=24 n=1 hw=112 frames=112
  capx bn3d_c96_28 200 bn_nchw c=96 n=1 hw=28 frames=28
  capx up3d_c48_56 12 upsample3d c=48 n=1 hw=56
  capx conv3d_c24_112 8 conv3d c=24 n=1 hw=112 frames=112
  capx conv3d_c96_28 100 conv3d c=96 n=1 hw=28 frames=28
}
controls fams
echo "captures done at $((SECONDS - T0)) s"
ncuops "bn3d_c24_112=bn_nchw,c=24,n=1,hw=112,frames=112 up3d_c48_56=upsample3d,c=48,n=1,hw=56 conv3d_c24_112=conv3d,c=24,n=1,hw=112,frames=112 bn3d_c96_28=bn_nchw,c=96,n=1,hw=28,frames=28" 200
echo "total $((SECONDS - T0)) s"
pack caps19
