#!/usr/bin/env bash
# Second device call of validation/h200/heldout3/ (~2 min): is each training
# builder's loss finite (loss_check.py; the first VGG-16 capture drew 470 W
# against dvfsim's 700 W), then VGG-16 captured again with AdamW.
#   bash validation/h200/heldout3/run2.sh OUTDIR
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run2.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d)
exec > >(tee -a "$out/run2.log") 2>&1
for b in "vgg16_train --arg sgd=1" vgg16_train efficientnet_train convnext_train neox_train; do
  timeout 90 python3 "$here/loss_check.py" $b --steps 30
  echo "loss_check $b rc=$?"
done
timeout 80 python3 "$root/traces/capture/capture.py" --workload "$here/workloads.py:vgg16_train" \
  --out "$w" --tag vgg16_train_b64_adamw --class cnn-train --profile-steps 3
echo "vgg16_train_b64_adamw rc=$?"
for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
tar -C "$w" -czf "$out/caps2.tar.gz" .
ls -la "$w" "$out"
