#!/usr/bin/env bash
# First device call on an H100 SXM (282 s on 2026-12-05, board GPU-b903b2e3):
# whether h100-sxm.yaml, which takes the H200's calibrated GH100 die
# terms and a labelled HBM3 and idle guess, predicts a measured H100. The
# calibration microbenchmarks (models/calibration/h200/microbench.py, default
# suite: idle, copies, elementwise, GEMMs) and five class captures of
# traces/capture/run_h200_classes.sh. Read-only NVML, nothing changed.
#   bash validation/h100/run1.sh OUTDIR
# Leaves OUTDIR/run1.log, OUTDIR/calib.tar.gz (smi.txt, smi_q.txt, calib.log, calib/) and
# OUTDIR/caps_*.tar (the captures, as run_h200_classes.sh packs them).
# ../h200/heldout3/lib.sh: out, root, w, and the log OUTDIR/run1.log
source "$(dirname "${BASH_SOURCE[0]}")/../h200/heldout3/lib.sh" "${1:-}" run1.log
mkdir -p "$w/a"
nvidia-smi -q -d CLOCK,POWER > "$w/a/smi_q.txt"
nvidia-smi --query-gpu=name,uuid,serial,vbios_version,driver_version,power.draw,power.limit,clocks.max.sm,clocks.max.mem,clocks.mem,temperature.gpu \
  --format=csv | tee "$w/a/smi.txt"
timeout 225 python3 "$root/models/calibration/h200/microbench.py" --out "$w/a/calib" > "$w/a/calib.log" 2>&1
echo "calib rc=$?"
tail -32 "$w/a/calib.log"
tar -C "$w" -czf "$out/calib.tar.gz" a
OUT="$out" BUDGET=190 timeout 215 bash "$root/traces/capture/run_h200_classes.sh" \
  resnet50_train_b128 bert_base_train_b32_t512 gpt3medium_train_b1_t512 llama1b_decode_b1_kv512 \
  llama1b_train_b2_t2048
echo "classes rc=$?"
ls -la "$out"
