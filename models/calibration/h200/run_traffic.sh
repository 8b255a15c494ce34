#!/usr/bin/env bash
# One device call (~4 min; run 2026-12-05 on an H100: validation/h100/traffic/): the `traffic`
# suite of microbench.py (docs/calibration.md, "Kernels on a few SMs") and
# Nsight Compute (--clock-control none) over one launch of each of its
# kernels. Nothing on the GPU is changed; NVML is read only.
#   bash models/calibration/h200/run_traffic.sh OUTDIR
# Leaves OUTDIR/traffic.log and OUTDIR/traffic.tar.gz: smi.txt, log.txt (microbench), the suite's
# measurements.csv, samples.csv.gz, device_info.json, bench_details.json,
# ncu.csv (ncu --csv --page raw) and ncu.out (the benchmarks' ORDER).
# validation/h200/heldout3/lib.sh: out, root, w, and the log OUTDIR/traffic.log
source "$(dirname "${BASH_SOURCE[0]}")/../../../validation/h200/heldout3/lib.sh" "${1:-}" traffic.log
here="$root/models/calibration/h200"
mkdir -p "$w/t"
nvidia-smi --query-gpu=name,uuid,serial,vbios_version,driver_version,power.draw,power.limit,temperature.gpu \
  --format=csv | tee "$w/t/smi.txt"
timeout 270 python3 "$here/microbench.py" --suite traffic --out "$w/run" > "$w/t/log.txt" 2>&1
echo "microbench rc=$?"
tail -28 "$w/t/log.txt"
cp "$w"/run/*.csv "$w"/run/*.json "$w"/run/*.gz "$w/t/" 2>/dev/null
timeout 90 ncu --clock-control none --profile-from-start off --csv --page raw --print-summary none \
  --metrics gpu__time_duration.sum,sm__inst_executed.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.avg,l1tex__t_bytes.sum \
  --log-file "$w/t/ncu.csv" python3 "$here/ncu_instmix.py" traffic --out "$w/run" > "$w/t/ncu.out" 2>&1
echo "ncu rc=$?"
tail -2 "$w/t/ncu.out"
tar -C "$w" -czf "$out/traffic.tar.gz" t
ls -la "$out"
