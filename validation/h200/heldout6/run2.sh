#!/usr/bin/env bash
# Second device call of validation/h200/heldout6/ (~3 min): Nsight Compute
# (--clock-control none, one step after three warm-up steps, L2 flushed per
# kernel) on every kernel of one GNN step, DeepLabV3's bilinear upsampling
# and the sampling generate's sort, top-k and gather kernels: the measured
# utilisation of the class `other` on networks that rule had not seen.
#   bash validation/h200/heldout6/run2.sh OUTDIR
# Leaves OUTDIR/ncu.log and OUTDIR/ncu.tar.gz (ncu_<tag>.subset.csv.gz each).
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "${1:-}" run2.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ncu_run 70 '' "gnn_sage_train_200k=$here/workloads.py:gnn_train"
ncu_run 50 'upsample' "deeplabv3_train_b8_256=$here/workloads.py:deeplab_train"
ncu_run 60 'Sort|sort|topk|TopK|gather|multinomial|cumsum|scan|Scan' "gpt2_sample_b8=$here/workloads.py:sample_generate"
ncu_reduce
pack ncu
