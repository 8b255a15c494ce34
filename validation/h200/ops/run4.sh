#!/usr/bin/env bash
# Fourth device call of validation/h200/ops/ (~4 min; prepared 2026-12-05,
# not yet run): the operators that test the L2 rule of layout-changing copies
# off its fit (float32 copies, a matrix transpose, a narrow channel count, an
# elementwise add_ across layouts, which the rule does not cover yet) and the
# 7x7 depthwise pricing at ConvNeXt-T's third-stage size, each captured alone
# with two streaming controls, then Nsight Compute on one repetition of each
# new one (as run2.sh; everything packed into one archive: the device tool
# returns at most eight files).
#   bash validation/h200/ops/run4.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps4.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
new="add_mixed to_nhwc_fp32 to_nchw_fp32 transpose to_nhwc_c8 dwconv7_s3"
capops "add:60 to_nhwc:200 add_mixed:200 to_nhwc_fp32:100 to_nchw_fp32:100 transpose:20 to_nhwc_c8:100 dwconv7_s3:20"
ncuops "$new" 150
pack caps4
