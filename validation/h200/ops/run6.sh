#!/usr/bin/env bash
# Sixth device call of validation/h200/ops/ (~2 min; run once, 2026-12-05, on
# an H100, the only machine lent: its files are in validation/h100/): run5.sh's
# operators and the streaming control again on whichever board the lease
# gives, with MC3-18 and R3D-18 (../heldout7, ../heldout5) captured beside
# them: whether run5.sh's board (GPU-a841e088, its control 10 % below three
# other boards') or the model makes the seventh set's errors.
#   bash validation/h200/ops/run6.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps6.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60 conv_nchw:40 conv_stem_nchw:10 bn_nchw:20 conv3d:40"
timeout 60 python3 "$root/traces/capture/capture.py" --workload "$root/validation/h200/heldout7/workloads.py:mc3_train" \
  --out "$w" --tag mc3_18_train_b8 --class video-cnn-train --profile-steps 3
timeout 60 python3 "$root/traces/capture/capture.py" --workload "$root/validation/h200/heldout5/workloads.py:r3d_train" \
  --out "$w" --tag r3d18_train_b8 --class video-cnn-train --profile-steps 3
pack caps6
