#!/usr/bin/env bash
# Fifth device call of validation/h200/ops/ (~3 min; prepared 2026-12-05
# after the rules for cuDNN's layout transforms and SIMT implicit
# convolutions were set on R3D-18): the NCHW operators of ResNet-18 in NCHW
# one at a time (a 3x3 convolution and the 7x7 stem with cuDNN's transforms
# around them, batch norm's NCHW kernels) and a 3-D convolution of R3D-18's,
# captured alone with a streaming control, then Nsight Compute on one
# repetition of each new one (everything in one archive).
#   bash validation/h200/ops/run5.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps5.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
new="conv_nchw conv_stem_nchw bn_nchw conv3d"
capops "add:60 conv_nchw:40 conv_stem_nchw:10 bn_nchw:20 conv3d:40"
ncuops "$new" 130
pack caps5
