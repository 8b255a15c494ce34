#!/usr/bin/env bash
# One device call (188 s on 2026-12-05, an H100 SXM, board GPU-3120a08d): FP8 (e4m3) tensor-core GEMMs against bf16 ones
# (models/calibration/h200/microbench.py --suite fp8), two captures of an FFN
# stack with FP8 and with bf16 matrix products (workloads.py), and Nsight
# Compute (--clock-control none) on one step of each. Nothing on the GPU is
# changed; NVML is read only.
#   bash validation/h100/fp8/run.sh OUTDIR
# Leaves OUTDIR/run.log, OUTDIR/calib.tar.gz (smi.txt, log.txt and the suite's
# files) and OUTDIR/caps.tar.gz (the captures and ncu_<tag>.subset.csv.gz).
# ../../h200/heldout3/lib.sh: out, root, w, cap, pack, ncu_run, ncu_reduce
source "$(dirname "${BASH_SOURCE[0]}")/../../h200/heldout3/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # cap and ncu_run read $here/workloads.py
mkdir -p "$w/c"
nvidia-smi --query-gpu=name,uuid,serial,vbios_version,driver_version,power.draw,power.limit,clocks.max.sm,temperature.gpu \
  --format=csv | tee "$w/c/smi.txt"
python3 -c "import torch; print(torch.__version__, torch.version.cuda)"
timeout 140 python3 "$root/models/calibration/h200/microbench.py" --suite fp8 --out "$w/c/run" > "$w/c/log.txt" 2>&1
echo "microbench rc=$?"
tail -16 "$w/c/log.txt"
tar -C "$w" -czf "$out/calib.tar.gz" c
rm -rf "$w/c"
cap ffn_fp8_infer_t8192 fp8-inference 70 ffn_fp8_infer
cap ffn_bf16_infer_t8192 bf16-inference 70 ffn_bf16_infer
ncu_run 110 '' "ffn_fp8_infer_t8192=$here/workloads.py:ffn_fp8_infer"
ncu_run 80 '' "ffn_bf16_infer_t8192=$here/workloads.py:ffn_bf16_infer"
ncu_reduce
pack caps
