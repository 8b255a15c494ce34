#!/usr/bin/env bash
# One device call: on an H200, ../heldout10/run.sh's H200 branch. On an H100:
# the streaming control (`add`) before and after, and the two networks whose
# layer norms the rule of traces/annotate.cpp (norm_instructions) was held out
# on in situ, ConvNeXt-T and Swin-T at the shapes of ../heldout3 and
# ../heldout5, three traced steps each: the held-out check of the rule on
# whole steps of another GPU. Read-only NVML.
#   bash validation/h200/heldout17/run.sh OUTDIR
# Leaves OUTDIR/caps17.log and OUTDIR/caps17.tar.gz.
source "$(dirname "${BASH_SOURCE[0]}")/../heldout10/on_h200.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" caps17.log
board
nets() {
  local h=$root/validation/h200
  capw convnext_t_train_b64 cnn-train 100 "$h/heldout3/workloads.py:convnext_train"
  capw swin_t_train_b64 vit-train 110 "$h/heldout5/workloads.py:swin_train"
}
controls nets
echo "total $((SECONDS - T0)) s"
pack caps17
