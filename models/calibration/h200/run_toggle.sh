#!/usr/bin/env bash
# One device call (~3 min): the `toggle` suite of microbench.py (docs/calibration.md,
# "Bits on the memory bus"): a 4 GiB device-to-device copy on data of nine
# kinds (fp32, bf16 and fp16 N(0, 1), ReLU'd bf16 and fp32, random bits,
# zeros, int64 indices, fp32 holding bf16 values), the fp32 axpy on random,
# ReLU'd and bf16-valued data and the fp32 GELU on random and bf16-valued
# data. Nothing on the GPU is changed; NVML is read only.
#   bash models/calibration/h200/run_toggle.sh OUTDIR
# Leaves OUTDIR/toggle.log and OUTDIR/toggle.tar.gz: smi.txt and, for each of
# its two parts (copies, rest), log, measurements.csv, samples.csv.gz,
# device_info.json, bench_details.json.
source "$(dirname "${BASH_SOURCE[0]}")/../../../validation/h200/heldout3/lib.sh" "${1:-}" toggle.log
here="$root/models/calibration/h200"
mkdir -p "$w/t"
nvidia-smi --query-gpu=name,uuid,serial,vbios_version,driver_version,power.draw,power.limit,temperature.gpu \
  --format=csv | tee "$w/t/smi.txt"
# Two processes: microbench.py keeps every row's tensors until it counts the
# kernels at the end, and the nine 4 GiB copies alone fill an 80 GB card.
copies=idle_ctx,copy_4GB_fp32,copy_4GB_fp32_zeros,copy_4GB_fp32_bits,copy_4GB_bf16,copy_4GB_fp16,copy_4GB_bf16_relu,copy_4GB_fp32_relu,copy_4GB_int64_index
rest=idle_ctx,copy_4GB_fp32,copy_4GB_fp32_zeros,copy_4GB_fp32_bf16vals,ew_axpy_fp32,ew_axpy_fp32_relu,ew_axpy_fp32_bf16vals,ew_gelu_fp32,ew_gelu_fp32_bf16vals,idle_ctx_post
for part in copies rest; do
  timeout 200 python3 "$here/microbench.py" --suite toggle --only "${!part}" \
    $([ $part = rest ] && echo --no-deep-idle) --out "$w/run_$part" > "$w/t/log_$part.txt" 2>&1
  echo "microbench $part rc=$?"
  tail -14 "$w/t/log_$part.txt"
  for f in "$w/run_$part"/*; do cp "$f" "$w/t/${part}_$(basename "$f")"; done
done
tar -C "$w" -czf "$out/toggle.tar.gz" t
ls -la "$out"
