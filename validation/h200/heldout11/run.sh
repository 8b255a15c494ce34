#!/usr/bin/env bash
# The eleventh held-out set (docs/validation.md, "Held-out workloads,
# eleventh set"): one device call. On an H200 it is ../heldout10/run.sh's
# H200 branch (the H100's eighth and ninth sets and a Faster R-CNN, never
# captured on an H200). On an H100: six H200 captures of the held-out sets
# again (a depthwise CNN, fp16 and bf16 inference, an fp32 GRU, HF GPT-2
# training), for how h100-sxm.yaml transfers, beside the streaming control.
# Read-only NVML.
#   bash validation/h200/heldout11/run.sh OUTDIR
# Leaves OUTDIR/run.log and OUTDIR/caps.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" run.log
board
nets() {
  local v=$root/validation/h200
  capw efficientnet_b0_train_b256 cnn-train 80 "$v/heldout3/workloads.py:efficientnet_train"
  capw resnet152_infer_b256 cnn-infer 70 "$v/heldout3/workloads.py:resnet152_infer"
  capw bert_large_infer_fp16_b32_t512 encoder-infer 70 "$v/heldout3/workloads.py:bert_large_infer_fp16"
  capw wide_resnet50_infer_fp16_b128 cnn-infer 70 "$v/heldout5/workloads.py:wide_resnet_infer_fp16"
  capw gru_train_b32_t256 rnn-train 70 "$v/heldout2/workloads.py:gru_train"
  capw gpt2_hf_train_b8_t1024 decoder-train 90 "$v/heldout/workloads.py:hf_gpt2_train"
}
controls nets
echo "total $((SECONDS - T0)) s"
pack caps
