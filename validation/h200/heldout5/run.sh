#!/usr/bin/env bash
# The captures of validation/h200/heldout5/ (docs/validation.md, "Held-out
# workloads, fifth set"): one device call on an H200, ~6 min; three traced
# steps each (capture.py's defaults otherwise). Then the shipped step
# (GPT-3-XL, batch 4 x 2048, traces/data/) measured again over a 9.3 s
# window as the shipped measurement was, for its run-to-run spread: its
# measurement is kept, its trace is not.
#   bash validation/h200/heldout5/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz. Read-only NVML.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,temperature.gpu --format=csv
python3 -c "import torch, torchvision, transformers; print(torch.__version__, torchvision.__version__, transformers.__version__)"
cap swin_t_train_b64              vit-train     90 swin_train
cap densenet121_train_b64         cnn-train     90 densenet_train
cap r3d18_train_b8                cnn-train     90 r3d_train
cap wav2vec2_train_b4             encoder-train 90 wav2vec2_train
cap dlrm_train_b2048              recsys-train  90 dlrm_train
cap llama_generate_b1             decode        120 llama_generate
cap wide_resnet50_infer_fp16_b128 cnn-infer     90 wide_resnet_infer_fp16
s=$(mktemp -d)
timeout 150 python3 "$root/traces/capture/capture.py" --workload gpt3_train --arg preset=xl --arg batch=4 \
  --arg seq=2048 --window-s 9.3 --profile-steps 1 --out "$s" --tag gpt3xl_train_b4_t2048_remeasure --class decoder-train
echo "remeasure rc=$?"
cp "$s"/*.measured.json "$w"/ 2>/dev/null
pack caps
