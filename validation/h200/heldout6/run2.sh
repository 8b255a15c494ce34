#!/usr/bin/env bash
# Second device call of validation/h200/heldout6/ (~3 min): Nsight Compute
# (--clock-control none, one step after three warm-up steps, L2 flushed per
# kernel) on every kernel of one GNN step, DeepLabV3's bilinear upsampling
# and the sampling generate's sort, top-k and gather kernels: the measured
# utilisation of the class `other` on networks that rule had not seen.
#   bash validation/h200/heldout6/run2.sh OUTDIR
# Leaves OUTDIR/ncu.log and OUTDIR/ncu.tar.gz (ncu_<tag>.subset.csv.gz each).
set -u
out="${1:?usage: run2.sh OUTDIR}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
raw=$(mktemp -d)
w=$(mktemp -d)
ncu_run() {  # LIMIT REGEX(or '') TAG=WORKLOAD
  local lim=$1 re=$2; shift 2
  OUT="$raw" BUDGET=$((lim + 5)) LIMIT="$lim" NCU_EXTRA="${re:+-k regex:$re}" \
    bash "$root/traces/capture/run_h200_ncu.sh" "$@"
}
ncu_run 70 '' "gnn_sage_train_200k=$here/workloads.py:gnn_train"
ncu_run 50 'upsample' "deeplabv3_train_b8_256=$here/workloads.py:deeplab_train"
ncu_run 60 'Sort|sort|topk|TopK|gather|multinomial|cumsum|scan|Scan' "gpt2_sample_b8=$here/workloads.py:sample_generate"
for f in "$raw"/ncu_*.csv; do
  python3 "$root/traces/capture/ncu_reduce.py" "$f" "$w/$(basename "${f%.csv}").subset.csv.gz"
done
cp "$raw/run.log" "$out/ncu.log"
tar -C "$w" -czf "$out/ncu.tar.gz" .
ls -la "$w" "$out"
