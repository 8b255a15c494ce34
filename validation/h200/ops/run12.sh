#!/usr/bin/env bash
# Twelfth device call of validation/h200/ops/ (2026-12-06): the two network
# captures that bound a convolution rule (docs/validation.md, "The width
# sweep"), VGG-16 with AdamW (+4.90 % on its board, no margin) and the 3-D
# U-Net (-7.96 %), captured again with their original builders and shapes
# beside the streaming control, so that their errors can be read against
# the board's.
#   bash validation/h200/ops/run12.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" caps12.log
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
capops "add:60"
timeout 90 python3 "$root/traces/capture/capture.py" --workload "$root/validation/h200/heldout3/workloads.py:vgg16_train" \
  --out "$w" --tag vgg16_train_b64_adamw --class cnn-train --profile-steps 3
echo "vgg16_train_b64_adamw rc=$?"
timeout 70 python3 "$root/traces/capture/capture.py" --workload "$root/validation/h200/heldout7/workloads.py:unet3d_train" \
  --out "$w" --tag unet3d_train_b2_96 --class volumetric-cnn-train --profile-steps 3
echo "unet3d_train_b2_96 rc=$?"
capx add_end 60 add
pack caps12
