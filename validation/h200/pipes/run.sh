#!/usr/bin/env bash
# One device call, whichever GPU is lent (the H100 and H200 run the same SASS
# on the same die): Nsight Compute (--clock-control none) with each pipe's
# warp instructions (run_h200_ncu.sh NCU_PIPES=1) on one repetition of the
# operators whose power the H100 operator calls measured against the
# streaming control (validation/h100/families/table.py): what mix of FMA, ALU,
# XU and LSU instructions each family issues, for a SIMT price per mix
# (docs/calibration.md, "One price per warp instruction, by pipe": it does
# not hold out). Read-only NVML; nothing captured for power.
#   [BUDGET=S] bash validation/h200/pipes/run.sh OUTDIR   (S: seconds for Nsight
#   Compute, default 420; the operators run in order of interest)
# Leaves OUTDIR/pipes.log, OUTDIR/ncu.log and OUTDIR/pipes.tar.gz
# (ncu_op_<tag>.subset.csv.gz with the pipe_* columns of ncu_reduce.py).
# With OPS="NAME ..." and NAME=pipes2 in the environment (run2.sh), those
# operators instead, into OUTDIR/pipes2.log and OUTDIR/pipes2.tar.gz.
name=${NAME:-pipes}
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" "$name.log"
board
export NCU_PIPES=1
ncuops "${OPS:-add up2d_near=upsample2d,mode=nearest roll_fp32=roll,dtype=fp32 scatter_r1k=scatter,rows=1024 gather maxpool up2d_bic=upsample2d,mode=bicubic layer_norm_r16k=layer_norm,rows=16384,features=1024 bn_nchw_c16=bn_nchw,c=16,n=512 up2d_near_cl=upsample2d,mode=nearest,cl=1 up2d_bil=upsample2d,mode=bilinear up2d_bil_cl=upsample2d,mode=bilinear,cl=1 scatter_r2m=scatter,rows=2097152 gather_r2m=gather,rows=2097152 bn_nchw_c512=bn_nchw,c=512,n=16 layer_norm_r64=layer_norm,rows=64,features=262144 group_norm_n32=group_norm,n=32 dwconv7_s3 conv3d_c24_112=conv3d,c=24,n=1,hw=112,frames=112 up3d_c48_56=upsample3d,c=48,n=1,hw=56}" "${BUDGET:-420}"
echo "total $((SECONDS - T0)) s"
pack "$name"
