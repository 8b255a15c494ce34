#!/usr/bin/env bash
# The twenty-third call: one device call, whichever GPU is lent. Read-only
# NVML; nothing on the GPU is set.
#   Either GPU: the streaming control (validation/h200/ops/: `add`) before
#     and after; the five workloads of workloads.py here (int8 tensor-core
#     inference, a state-space model's chunked scan, an fp16 VAE decoder, a
#     DCGAN, a Fourier neural operator: kinds of step no capture had run),
#     three traced steps each.
#   H200 only, as time allows: ../heldout10/h200_list.sh (a diffusion U-Net,
#     a Whisper-shaped model, two narrow U-Nets, a Faster R-CNN: classes
#     captured on H100 boards, never on an H200).
#   bash validation/h200/heldout23/run.sh OUTDIR
#   Then, while the call has time, Nsight Compute on one step of each of the
#     five.
# Leaves OUTDIR/run.log, OUTDIR/ncu.log and OUTDIR/caps.tar.gz. Every capture
# is skipped once the call has run CAP_END s (default 470), Nsight Compute
# stops at NCU_END s (545), so that the archive is packed inside the device
# tool's 600 s (or a shorter limit, with smaller ends).
source "$(dirname "${BASH_SOURCE[0]}")/../ops/lib.sh" "${1:-}" run.log
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
board
# capt TAG CLASS LIMIT_S WORKLOAD: capw while the call has time for it
capt() {
  local left=$((${CAP_END:-470} - (SECONDS - T0)))
  if ((left < 30)); then echo "$1 skipped at $((SECONDS - T0)) s"; return; fi
  capw "$1" "$2" $(($3 < left ? $3 : left)) "$4"
}
capops "add:60"
capt int8_mlp_infer_t8192 int8-infer 80 "$here/workloads.py:int8_mlp_infer"
capt ssd_train_b8_t2048 ssm-train 100 "$here/workloads.py:ssd_train"
capt vae_decode_fp16_b4_512 vae-decode-fp16 80 "$here/workloads.py:vae_decode"
capt dcgan_train_b1024 gan-train 80 "$here/workloads.py:dcgan_train"
capt fno_train_b64_128 fft-train-fp32 80 "$here/workloads.py:fno_train"
if [[ $gpu == *H200* ]]; then
  h100=$root/validation/h100 h10=$root/validation/h200/heldout10
  capt ddpm_unet_train_b64_64 diffusion-unet-train 90 "$h100/heldout8/workloads.py:ddpm_unet_train"
  capt unet2d_c32_train_b16_256 unet-train 80 "$h100/heldout9/workloads.py:unet2d_c32_train"
  capt fasterrcnn_train_b4_512 detection-train 80 "$h10/workloads.py:fasterrcnn_train"
  capt unet3d_w24_train_b1_112 volumetric-cnn-train 80 "$h100/heldout9/workloads.py:unet3d_w24_train"
  capt whisper_small_train_b32 speech-enc-dec-train 100 "$h100/heldout8/workloads.py:whisper_train"
fi
capx add_end 60 add
# Nsight Compute (--clock-control none) on one step of each of the five, as
# long as the call has time: the annotation's DRAM bytes and instructions
# against the counters (ncu_<TAG>.subset.csv.gz, heldout3/lib.sh's ncu_reduce).
left=$((${NCU_END:-545} - (SECONDS - T0)))
if ((left > 60)); then
  mkdir -p "$w/ncu_raw"
  OUT="$w/ncu_raw" BUDGET=$left LIMIT=120 bash "$root/traces/capture/run_h200_ncu.sh" \
    "int8_mlp_infer_t8192=$here/workloads.py:int8_mlp_infer" \
    "dcgan_train_b1024=$here/workloads.py:dcgan_train" \
    "vae_decode_fp16_b4_512=$here/workloads.py:vae_decode" \
    "fno_train_b64_128=$here/workloads.py:fno_train" \
    "ssd_train_b8_t2048=$here/workloads.py:ssd_train"
  ncu_reduce
fi
echo "total $((SECONDS - T0)) s"
pack caps
