#!/usr/bin/env bash
# One device call on an H200: Nsight Compute (--clock-control none: the clocks
# are left to the firmware) on one step of several workload classes, with the
# same shapes as their captures, plus any captures named in $CAPS.
#
# Usage: OUT=DIR [BUDGET=540] [LIMIT=200] [NCU_EXTRA="--replay-mode application"] [NCU_PIPES=1] [CAPS="tag ..."] bash traces/capture/run_h200_ncu.sh W1 W2 ...
#   NCU_PIPES=1 also counts the warp instructions of each pipe (FMA, ALU, XU,
#   LSU, FP16, uniform: sm__inst_executed_pipe_*), which ncu_reduce.py keeps.
#   each Wi is TAG=WORKLOAD[,key=value...] (options passed as --arg)
# Leaves in $OUT: run.log, ncu_<TAG>.csv (ncu --csv --page raw, one row per
# kernel of the step), caps_*.tar (the extra captures, run_h200_classes.sh).
set -u
export PYTHONUNBUFFERED=1
CAP="${CAP:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}"
OUT="${OUT:?set OUT to the output folder}"
BUDGET="${BUDGET:-540}"
exec > >(tee -a "$OUT/run.log") 2>&1
T0=$SECONDS
ncu --version | tail -1
METRICS="gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__inst_executed.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"
if [ "${NCU_PIPES:-0}" = 1 ]; then
  for p in fma alu xu lsu fp16 uniform; do METRICS+=",sm__inst_executed_pipe_$p.sum"; done
fi
for w in "$@"; do
  tag=${w%%=*}; rest=${w#*=}; wl=${rest%%,*}; extra=()
  if [ "$rest" != "$wl" ]; then IFS=, read -ra kv <<< "${rest#*,}"; for a in "${kv[@]}"; do extra+=(--arg "$a"); done; fi
  left=$((BUDGET - (SECONDS - T0)))
  if [ "$left" -lt 30 ]; then echo "ncu $tag skipped: ${left} s left"; continue; fi
  lim=${LIMIT:-200}; [ "$lim" -gt "$left" ] && lim=$left
  timeout "$lim" ncu ${NCU_EXTRA:-} --clock-control none --profile-from-start off --csv --page raw \
    --print-summary none --metrics "$METRICS" --log-file "$OUT/ncu_$tag.csv" \
    python3 "$CAP/capture.py" --workload "$wl" "${extra[@]}" --ncu --warmup 3 --out /tmp/ncu_$tag
  echo "ncu $tag rc=$? rows=$(grep -c '^"' "$OUT/ncu_$tag.csv" 2>/dev/null) at $((SECONDS - T0)) s"
done
if [ -n "${CAPS:-}" ]; then
  left=$((BUDGET - (SECONDS - T0)))
  OUT="$OUT" BUDGET=$((left > 0 ? left : 0)) bash "$CAP/run_h200_classes.sh" $CAPS
fi
ls -la "$OUT"
