#!/usr/bin/env bash
# Second device call of validation/h200/heldout3/ (~2 min): is each training
# builder's loss finite (loss_check.py; the first VGG-16 capture drew 470 W
# against dvfsim's 700 W), then VGG-16 captured again with AdamW.
#   bash validation/h200/heldout3/run2.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" run2.log
for b in "vgg16_train --arg sgd=1" vgg16_train efficientnet_train convnext_train neox_train; do
  timeout 90 python3 "$here/loss_check.py" $b --steps 30
  echo "loss_check $b rc=$?"
done
cap vgg16_train_b64_adamw cnn-train 80 vgg16_train
pack caps2
