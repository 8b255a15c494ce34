#!/usr/bin/env bash
# Second device call of validation/h200/ops/ (~4 min): the three operators
# added after run.sh (depthwise 5x5 and 7x7, the aligned cat), then Nsight
# Compute on one repetition of the operators whose counts run.sh's call did
# not bring back (the tool returns at most eight files: everything is packed
# into two archives here).
#   bash validation/h200/ops/run2.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps2.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
ops="dwconv5:20 dwconv7:10 cat_aligned:200"
capops "$ops"
ncuops "to_nhwc to_nchw shuffle maxpool vggconv vggconv_relu dwconv5 dwconv7 cat_aligned" 200
pack caps2
