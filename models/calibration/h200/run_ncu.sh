#!/usr/bin/env bash
# One device call: instruction mix (Nsight Compute, --clock-control none) of
# the calibration microbenchmarks and of one GPT-3-XL training step. Nothing
# on the GPU is changed: ncu leaves the clocks alone and NVML is not used.
#
# Usage, from the repository root on the device machine:
#   OUT=/some/dir bash models/calibration/h200/run_ncu.sh
# Leaves in $OUT: run.log, metrics.txt (the metrics asked for), micro.csv,
# step_xl.csv (ncu --csv --page raw) and the scripts' stdout in *.out.
set -u
export PYTHONUNBUFFERED=1
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${OUT:?set OUT to the output folder}"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$SECONDS
ncu --version
# Ask only for metrics this ncu knows on this GPU (an unknown name fails the run).
ncu --query-metrics --devices 0 > "$OUT/query.txt" 2>&1
want="gpu__time_duration.sum sm__cycles_elapsed.avg sm__cycles_elapsed.avg.per_second
sm__cycles_active.avg sm__inst_executed.sum sm__inst_executed_pipe_fma.sum
sm__inst_executed_pipe_alu.sum sm__inst_executed_pipe_xu.sum sm__inst_executed_pipe_lsu.sum
sm__inst_executed_pipe_fp16.sum sm__inst_executed_pipe_uniform.sum
sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active
smsp__thread_inst_executed_per_inst_executed.ratio
dram__bytes_read.sum dram__bytes_write.sum lts__t_bytes.sum l1tex__t_bytes.sum"
pick() {  # the names in $1 that this ncu knows, comma-separated
  local out="" m
  for m in $1; do
    if grep -qw -- "${m%%.*}" "$OUT/query.txt"; then out="$out,$m"; else echo "not available: $m" >&2; fi
  done
  echo "${out#,}"
}
micro_metrics=$(pick "$want")
# The step has ~1,400 kernels: a short list, replayed per application pass
# (rerunning the script, which is deterministic) with caches left warm.
step_metrics=$(pick "gpu__time_duration.sum sm__cycles_elapsed.avg sm__inst_executed.sum
sm__inst_executed_pipe_fma.sum sm__inst_executed_pipe_alu.sum sm__inst_executed_pipe_xu.sum
sm__inst_executed_pipe_lsu.sum sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
dram__bytes_read.sum dram__bytes_write.sum")
printf 'micro: %s\nstep: %s\n' "$micro_metrics" "$step_metrics" > "$OUT/metrics.txt"
NCU=(ncu --clock-control none --profile-from-start off --csv --page raw --print-summary none)
timeout 170 "${NCU[@]}" --metrics "$micro_metrics" --log-file "$OUT/micro.csv" \
  python3 "$HERE/ncu_instmix.py" micro > "$OUT/micro.out" 2>&1
echo "micro rc=$? at $((SECONDS - T0)) s"
timeout 380 "${NCU[@]}" --metrics "$step_metrics" --replay-mode application --cache-control none \
  --log-file "$OUT/step_xl.csv" python3 "$HERE/ncu_instmix.py" step --preset xl > "$OUT/step_xl.out" 2>&1
echo "step rc=$? at $((SECONDS - T0)) s"
tail -3 "$OUT/micro.out" "$OUT/step_xl.out"
wc -l "$OUT"/*.csv
gzip -k "$OUT/query.txt" && rm "$OUT/query.txt"
