#!/usr/bin/env bash
# Second device call of validation/h200/heldout7/ (~8 min): Nsight Compute on
# the kernels the rules of this set's check rest on — cuDNN's layout
# transforms (nchwToNhwc, nhwcToNchw), its SIMT implicit convolutions
# (implicit_convolve_sgemm, implicit_convolveNd_sgemm) and the convolution
# kernels around them — on the seventh set's networks and on the earlier
# captures that have them and were not used to fit the rules (U-Net and
# wav2vec 2.0, ResNet-18 in NCHW).
#   bash validation/h200/heldout7/run2.sh OUTDIR
# Leaves OUTDIR/ncu.log, OUTDIR/run2.log and OUTDIR/ncu.tar.gz
# (ncu_<tag>.subset.csv.gz each).
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run2.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
conv='ToNhwc|ToNchw|convolve|fprop|dgrad|wgrad|upsample'
ncu_run 80 "$conv" "mc3_18_train_b8=$here/workloads.py:mc3_train"
ncu_run 80 "$conv" "r2plus1d_18_train_b8=$here/workloads.py:r2plus1d_train"
ncu_run 80 "$conv" "unet3d_train_b2_96=$here/workloads.py:unet3d_train"
ncu_run 70 "$conv" "fcn_resnet50_train_b8_256=$here/workloads.py:fcn_train"
ncu_run 70 "$conv" "resnet50_fp32_nchw_train_b64=$here/workloads.py:resnet50_fp32_nchw_train"
ncu_run 45 'ToNhwc|ToNchw|convolve' "unet_train_b8_128=$here/../heldout2/workloads.py:unet_train"
ncu_run 45 'ToNhwc|ToNchw|convolve' "wav2vec2_train_b4=$here/../heldout5/workloads.py:wav2vec2_train"
ncu_run 45 'ToNhwc|ToNchw' "resnet18_nchw_train_b128=$here/../heldout5/workloads.py:resnet18_nchw_train"
ncu_reduce
pack ncu
