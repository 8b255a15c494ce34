#!/usr/bin/env bash
# One device call (either GPU; read-only, nothing on the GPU is set): Nsight
# Compute (--clock-control none, caches flushed before each kernel) on the
# softmax kernels of sweep.py, the held-out check of row_reread_bytes
# (traces/annotate.h). Leaves OUTDIR/ncu_softmax.csv (ncu --csv --page raw),
# OUTDIR/cases.txt (the cases in launch order) and OUTDIR/board.txt.
#   bash validation/h100/softmax/run.sh OUTDIR
set -u
out=${1:?OUTDIR}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nvidia-smi --query-gpu=name,uuid,serial,driver_version,power.limit --format=csv,noheader > "$out/board.txt"
python3 -c "import torch; print(torch.__version__)" >> "$out/board.txt"
timeout "${LIMIT:-400}" ncu --clock-control none --profile-from-start off --kernel-name regex:cunn_SoftMax \
  --csv --page raw --print-summary none \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
  --log-file "$out/ncu_softmax.csv" python3 "$here/sweep.py" > "$out/cases.txt"
echo "ncu rc=$? rows=$(grep -c '^"' "$out/ncu_softmax.csv")"
