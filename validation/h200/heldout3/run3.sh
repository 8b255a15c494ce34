#!/usr/bin/env bash
# Third device call of validation/h200/heldout3/ (~2 min): the `data` suite of
# microbench.py (operand dtype, ReLU zeros and weight scale on power-capped
# tensor-core work; docs/calibration.md, "Operand data"), then BERT-large
# inference in bf16, the fp16 capture's twin.
#   bash validation/h200/heldout3/run3.sh OUTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "${1:-}" run3.log
timeout 200 python3 "$root/models/calibration/h200/microbench.py" --suite data --out "$w/data" \
  --window-s 3.0 --no-deep-idle
echo "data suite rc=$?"
cap bert_large_infer_bf16_b32_t512 encoder-infer 80 bert_large_infer_fp16 --arg bf16=1
pack caps3
