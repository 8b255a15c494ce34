#!/usr/bin/env bash
# Second device call of validation/h200/heldout5/ (~9 min): Nsight Compute
# (--clock-control none, one step after three warm-up steps, L2 flushed per
# kernel as ncu does by default) on the kernels the fifth set's misses rest
# on, measured after those misses were seen (docs/validation.md, "Kernels of
# no known family"): R3D-18's batch-norm (NCHW), layout and 3-D convolution
# kernels, every kernel of one DLRM step, and the kernels of no known family
# (dvfsim's class `other`) of Swin-T (roll, sort, index backward), U-Net
# (nearest upsampling, validation/h200/heldout2) and wav2vec 2.0 (weight
# norm); then a ResNet-18 in NCHW captured and its batch-norm kernels
# measured, to hold out whatever R3D-18's say.
#   bash validation/h200/heldout5/run2.sh OUTDIR
# Leaves OUTDIR/ncu.log, OUTDIR/caps2.log and OUTDIR/ncu.tar.gz (the capture,
# ncu_<tag>.subset.csv.gz each).
set -u
out="${1:?usage: run2.sh OUTDIR}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
raw=$(mktemp -d)
ncu_run() {  # LIMIT REGEX(or '') TAG=WORKLOAD
  local lim=$1 re=$2; shift 2
  OUT="$raw" BUDGET=$((lim + 5)) LIMIT="$lim" NCU_EXTRA="${re:+-k regex:$re}" \
    bash "$root/traces/capture/run_h200_ncu.sh" "$@"
}
ncu_run 110 'batch_norm|ToNhwc|ToNchw|convolveNd|indexed' "r3d18_train_b8=$here/workloads.py:r3d_train"
ncu_run 90 '' "dlrm_train_b2048=$here/workloads.py:dlrm_train"
ncu_run 75 'roll|RadixSort|indexing_backward|UniqueByKey|Scan' "swin_t_train_b64=$here/workloads.py:swin_train"
ncu_run 50 'upsample' "unet_train_b8_128=$here/../heldout2/workloads.py:unet_train"
ncu_run 50 'weight_norm' "wav2vec2_train_b4=$here/workloads.py:wav2vec2_train"
source "$here/../heldout3/lib.sh" "$out" caps2.log  # cap, pack; w: the capture's folder
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cap resnet18_nchw_train_b128 cnn-train 60 resnet18_nchw_train
ncu_run 70 'batch_norm' "resnet18_nchw_train_b128=$here/workloads.py:resnet18_nchw_train"
for f in "$raw"/ncu_*.csv; do
  python3 "$root/traces/capture/ncu_reduce.py" "$f" "$w/$(basename "${f%.csv}").subset.csv.gz"
done
cp "$raw/run.log" "$out/ncu.log"
pack ncu
ls -la "$w" "$out"
