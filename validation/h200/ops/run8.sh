#!/usr/bin/env bash
# Eighth device call of validation/h200/ops/ (180 s, run once on an H100, 2026-12-05,
# evening, after the resident-warp rule for normalisation kernels was set on
# run7.sh's NCHW batch norm sweep): the rule off its fit, on three other
# normalisation families at grids from a few blocks to many waves, each
# captured alone beside the streaming control: channels-last batch norm at
# MobileNetV3's shapes, layer norm with 64 to 16,384 rows, group norm with 2 to
# 32 samples; and NCHW batch norm at 64 channels again (run7.sh's middle).
# Files: validation/h100/families/norms/.
#   bash validation/h200/ops/run8.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps8.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60 bn_nchw:20"
capx bn_cl_c16_hw112 20 bn n=128 c=16 hw=112
capx bn_cl_c72_hw56 20 bn n=128 c=72 hw=56
capx bn_cl_c240_hw28 20 bn n=128 c=240 hw=28
capx bn_cl_c576_hw7 100 bn n=128 c=576 hw=7
capx layer_norm_r64 20 layer_norm rows=64 features=262144
capx layer_norm_r1k 20 layer_norm rows=1024 features=16384
capx layer_norm_r16k 20 layer_norm rows=16384 features=1024
capx group_norm_n2 40 group_norm n=2
capx group_norm_n32 10 group_norm n=32
capx add_end 60 add
pack caps8
