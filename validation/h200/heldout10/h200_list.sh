# Sourced by run.sh here and ../heldout20/run.sh after ../ops/lib.sh:
#   h200_list   the H100's eighth and ninth held-out sets (a diffusion U-Net, a
#               Whisper-shaped model, two narrow U-Nets) and a Faster R-CNN,
#               three traced steps each: the classes never captured on an H200.
h200_list() {
  local h100=$root/validation/h100 h10=$root/validation/h200/heldout10
  capw ddpm_unet_train_b64_64 diffusion-unet-train 90 "$h100/heldout8/workloads.py:ddpm_unet_train"
  capw whisper_small_train_b32 speech-enc-dec-train 120 "$h100/heldout8/workloads.py:whisper_train"
  capw unet3d_w24_train_b1_112 volumetric-cnn-train 90 "$h100/heldout9/workloads.py:unet3d_w24_train"
  capw unet2d_c32_train_b16_256 unet-train 90 "$h100/heldout9/workloads.py:unet2d_c32_train"
  capw fasterrcnn_train_b4_512 detection-train 90 "$h10/workloads.py:fasterrcnn_train"
}
