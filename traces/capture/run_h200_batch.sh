#!/usr/bin/env bash
# One device call on an H200: the calibration microbenchmarks, then the
# validation captures. Read-only NVML throughout; no GPU setting is changed.
#
# Usage, from the repository root on the device machine:
#   OUT=/some/dir bash traces/capture/run_h200_batch.sh
# Leaves in $OUT (at most 8 files):
#   run.log                 everything printed
#   calib.tar.gz            calib/{measurements.csv,samples.csv.gz,device_info.json,bench_details.json}
#   <tag>.tar               <tag>/{<tag>.kineto.json.gz,<tag>.measured.json,<tag>.nvml_samples.csv}
set -u
export PYTHONUNBUFFERED=1
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${OUT:?set OUT to the output folder}"
W="$(mktemp -d)"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$SECONDS
echo "start $(date -u +%FT%TZ) root=$ROOT work=$W"

timeout 250 python3 "$ROOT/models/calibration/h200/microbench.py" --out "$W/calib"
echo "microbench rc=$? at $((SECONDS - T0)) s"
tar -C "$W" -czf "$OUT/calib.tar.gz" calib

cap() {
  local tag=$1 lim=$2
  shift 2
  timeout "$lim" python3 "$ROOT/traces/capture/capture_gpt3.py" --out "$W/$tag" --tag "$tag" "$@"
  echo "$tag rc=$? at $((SECONDS - T0)) s"
  [ -d "$W/$tag" ] && tar -C "$W" -cf "$OUT/$tag.tar" "$tag"
}
cap gpt3xl_train_b4_t2048    90 --preset xl     --batch 4 --seq 2048 --mode train --steps 40  --warmup 5
cap gpt3medium_train_b1_t512 70 --preset medium --batch 1 --seq 512  --mode train --steps 150 --warmup 10
cap gpt3xl_infer_b8_t2048    80 --preset xl     --batch 8 --seq 2048 --mode infer --steps 40  --warmup 5
cap gpt327b_train_b2_t2048   80 --preset 2.7b   --batch 2 --seq 2048 --mode train --steps 30  --warmup 4

echo "=== summary ($((SECONDS - T0)) s) ==="
python3 - "$W" <<'EOF'
import csv, glob, json, os, sys
w = sys.argv[1]
p = os.path.join(w, "calib", "measurements.csv")
if os.path.exists(p):
    for r in csv.DictReader(open(p)):
        print(f"{r['name']:26s} {r['class']:11s} {float(r['core_mhz']):7.1f} "
              f"[{r['core_mhz_p10']}-{r['core_mhz_p90']}] {float(r['mean_power_w']):6.1f} W "
              f"{float(r['window_s']):5.2f} s {float(r['energy_j']):8.1f} J busy {float(r['busy_s']):5.2f} "
              f"launches {r['launches']} rsn {hex(int(r['reasons_mask']))}")
for m in sorted(glob.glob(os.path.join(w, "*", "*.measured.json"))):
    d = json.load(open(m))
    ks = [s["kernels"] for s in d["profile"]["steps"]]
    print(f"{os.path.basename(m)[:-14]:26s} {d['time_per_step_s']*1e3:8.2f} ms/step "
          f"{d['energy_per_step_j']:8.2f} J/step {d['mean_power_w']:6.1f} W "
          f"SM {d['mean_sm_mhz']:.0f} MHz kernels/step {ks} rsn {hex(d['clock_event_reasons_mask'])}")
EOF
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
ls -la "$OUT"
