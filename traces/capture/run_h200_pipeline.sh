#!/usr/bin/env bash
# One device call: a pipeline-parallel GPT-3 XL validation set.
#
#   OUT=DIR [JOBS="2 4"] [M=8] [MB=2] [SEQ=2048] [BUDGET=540] \
#     bash traces/capture/run_h200_pipeline.sh
#
# 1. The single-GPU trace dvfsim builds its pipeline from: one training step
#    of one microbatch (capture_gpt3.py --batch MB), on GPU 0.
# 2. For every entry of JOBS, a pipeline capture (capture_pipeline.py): "S"
#    runs S ranks on S GPUs (NCCL), "S:shared" runs them on GPU 0 through the
#    host (gloo; a test of the schedule and the files, not a measurement).
#    An "S" with fewer than S GPUs visible is skipped with a message.
# 3. Everything is packed into $OUT/pipeline.tar.gz (the device tool returns
#    one archive).
#
# NVML is read-only throughout; clocks, limits and modes are never changed.
# NVLink multicast stays off (also in the ranks: capture_pipeline.py forces
# the variables before it imports torch).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
: "${OUT:?set OUT}"
JOBS="${JOBS:-2 4}"
M="${M:-8}"
MB="${MB:-2}"
SEQ="${SEQ:-2048}"
BUDGET="${BUDGET:-540}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export CUDA_DEVICE_ORDER=PCI_BUS_ID
py="${PYTHON:-python3}"
work="$OUT/pipeline"
mkdir -p "$work"
t0=$SECONDS
left() { echo $((BUDGET - (SECONDS - t0))); }
log="$work/run.log"
ngpu=$("$py" -c 'import torch; print(torch.cuda.device_count())')
echo "run_h200_pipeline: $ngpu GPU(s) visible, JOBS='$JOBS' M=$M MB=$MB SEQ=$SEQ" | tee -a "$log"
nvidia-smi --query-gpu=index,name,uuid,power.limit,clocks.sm --format=csv >> "$log" 2>&1

single="gpt3xl_train_b${MB}_t${SEQ}"
timeout $(( $(left) < 150 ? $(left) : 150 )) "$py" "$here/capture_gpt3.py" --preset xl \
  --batch "$MB" --seq "$SEQ" --mode train --steps 30 --warmup 4 --profile-steps 2 \
  --out "$work" --tag "$single" 2>&1 | tee -a "$log"

for job in $JOBS; do
  s="${job%%:*}"
  extra=()
  [ "$job" != "$s" ] && extra=(--share-gpu)
  if [ ${#extra[@]} -eq 0 ] && [ "$s" -gt "$ngpu" ]; then
    echo "skip pp=$s: $ngpu GPU(s) visible" | tee -a "$log"
    continue
  fi
  if [ "$(left)" -lt 60 ]; then
    echo "skip pp=$s: $(left) s of the budget left" | tee -a "$log"
    continue
  fi
  timeout "$(left)" "$py" "$here/capture_pipeline.py" --stages "$s" --microbatches "$M" \
    --micro-batch "$MB" --seq "$SEQ" --out "$work" "${extra[@]}" 2>&1 | tee -a "$log"
done
for f in "$work"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -f "$f"; done
tar -C "$OUT" -czf "$OUT/pipeline.tar.gz" pipeline && rm -rf "$work"
ls -l "$OUT"
