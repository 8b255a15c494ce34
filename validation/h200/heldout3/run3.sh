#!/usr/bin/env bash
# Third device call of validation/h200/heldout3/ (~2 min): the `data` suite of
# microbench.py (operand dtype, ReLU zeros and weight scale on power-capped
# tensor-core work; docs/calibration.md, "Operand data"), then BERT-large
# inference in bf16, the fp16 capture's twin.
#   bash validation/h200/heldout3/run3.sh OUTDIR
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run3.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d)
exec > >(tee -a "$out/run3.log") 2>&1
timeout 200 python3 "$root/models/calibration/h200/microbench.py" --suite data --out "$w/data" \
  --window-s 3.0 --no-deep-idle
echo "data suite rc=$?"
timeout 80 python3 "$root/traces/capture/capture.py" --workload "$here/workloads.py:bert_large_infer_fp16" \
  --arg bf16=1 --out "$w" --tag bert_large_infer_bf16_b32_t512 --class encoder-infer --profile-steps 3
echo "bert_large_infer_bf16_b32_t512 rc=$?"
for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
tar -C "$w" -czf "$out/caps3.tar.gz" .
ls -la "$w" "$w/data" "$out"
