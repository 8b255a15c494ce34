#!/usr/bin/env bash
# Third device call of validation/h200/ops/ (~4 min): every operator again,
# energy window and two traced steps, to see how the per-operator errors
# repeat on the board of another call (capture.py now records the board:
# `board` in each measured.json).
#   bash validation/h200/ops/run3.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps3.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
ops="copy:600 add:60 cat_aligned:200 shuffle:200 to_nhwc:200 to_nchw:200 cat:200 maxpool:30 bn:30 conv1x1:30 dwconv:20 dwconv5:20 dwconv7:10 vggconv:15 vggconv_relu:15"
capops "$ops"
pack caps3
