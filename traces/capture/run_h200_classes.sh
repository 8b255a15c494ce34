#!/usr/bin/env bash
# One device call on an H200: the host-overhead microbenchmark, then one
# capture per workload class (traces/capture/capture.py + workloads.py).
# Read-only NVML throughout; no GPU setting is changed.
#
# Usage, from the repository root (or with CAP pointing at traces/capture):
#   OUT=/some/dir [BUDGET=540] bash traces/capture/run_h200_classes.sh [TAG ...]
# With TAGs, only those captures run. Leaves in $OUT (at most 8 files):
#   run.log, hostbench.json, caps_<n>.tar (the captures, packed <= 15 MB each)
set -u
export PYTHONUNBUFFERED=1
CAP="${CAP:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
OUT="${OUT:?set OUT to the output folder}"
W="$(mktemp -d)"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$SECONDS
echo "start $(date -u +%FT%TZ) cap=$CAP work=$W"
nvidia-smi --query-gpu=name,driver_version,pstate,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu --format=csv
ONLY=" $* "
BUDGET="${BUDGET:-540}"  # seconds for everything before the packing

want() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }

if want hostbench; then
  timeout 90 python3 "$CAP/host_overhead_bench.py" --out "$OUT/hostbench.json"
  echo "hostbench rc=$? at $((SECONDS - T0)) s"
fi

cap() {  # tag class limit_s workload [capture options...]
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  want "$tag" || return 0
  local left=$((BUDGET - (SECONDS - T0)))
  if [ "$left" -lt 25 ]; then echo "$tag skipped: ${left} s of the budget left"; return 0; fi
  [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" python3 "$CAP/capture.py" --workload "$wl" --out "$W/$tag" --tag "$tag" \
    --class "$klass" "$@"
  echo "$tag rc=$? at $((SECONDS - T0)) s"
}
cap encoder_small_train_b2     small-batch-train  60 smallbatch_train
if [ "$ONLY" = "  " ] && [ ! -f "$W/encoder_small_train_b2/encoder_small_train_b2.measured.json" ]; then
  echo "first capture failed: stopping early"; exit 3
fi
cap resnet50_train_b128        cnn-train          75 cnn_train
cap bert_base_train_b32_t512   encoder-train      75 bert_train
cap llama1b_train_b2_t2048     decoder-train      80 llama_train
cap moe8x_train_b8_t1024       moe-train          75 moe_train
cap encoder_fp32_train_b16     fp32-train         75 fp32_train
cap encoder_tf32_train_b16     tf32-train         70 fp32_train --arg tf32=1
cap llama1b_prefill_t32k       long-prefill       70 prefill_long
cap llama1b_cudagraph_b2_t256  cuda-graph-infer   60 cudagraph_infer
cap llama1b_decode_b1_kv512    kv-decode          80 decode_kvcache --window-s 2.0
cap gpt3medium_train_b1_t512   small-batch-train  60 gpt3_train --arg preset=medium
cap llama_compile_train_b8     compiled-train    170 compile_train --warmup 6

echo "=== summary ($((SECONDS - T0)) s) ==="
python3 - "$W" "$OUT" <<'EOF'
import glob, json, os, sys, tarfile
w, out = sys.argv[1], sys.argv[2]
for m in sorted(glob.glob(os.path.join(w, "*", "*.measured.json"))):
    d = json.load(open(m))
    p = d["profile"]
    print(f"{d['tag']:28s} {d['time_per_step_s']*1e3:9.3f} ms {d['energy_per_step_j']:8.3f} J "
          f"{d['mean_power_w']:6.1f} W SM {d.get('mean_sm_mhz') or 0:5.0f} "
          f"host {d['host_step_s_mean']*1e3:8.3f} prof {[round(h*1e3,2) for h in p['host_step_s']]} "
          f"k {[s['kernels'] for s in p['steps']]} busy {[round(s['gpu_busy_ms'],2) for s in p['steps']]} "
          f"rsn {hex(d.get('clock_event_reasons_mask', 0))}")
# pack: each capture folder whole, into tars of <= 15 MB
dirs = sorted(d for d in glob.glob(os.path.join(w, "*")) if os.path.isdir(d))
size = lambda d: sum(os.path.getsize(f) for f in glob.glob(os.path.join(d, "*")))
bins, cur, cur_sz = [], [], 0
for d in dirs:
    s = size(d)
    if cur and cur_sz + s > 15e6:
        bins.append(cur); cur, cur_sz = [], 0
    cur.append(d); cur_sz += s
if cur:
    bins.append(cur)
for i, b in enumerate(bins[:6]):
    with tarfile.open(os.path.join(out, f"caps_{i}.tar"), "w") as t:
        for d in b:
            t.add(d, arcname=os.path.basename(d))
    print(f"caps_{i}.tar: {[os.path.basename(d) for d in b]}")
EOF
nvidia-smi --query-gpu=name,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
ls -la "$OUT"
