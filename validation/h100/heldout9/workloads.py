"""Ninth set of held-out workloads (docs/validation.md, "Held-out workloads,
ninth set"): narrow convolution networks at shapes no capture had, written
on 2026-12-06 after the rule that gives tensor-core convolutions their L2
traffic from their shapes and tiles (`conv_l2_bytes_per_flop`, fitted on
R3D-18 alone), as its held-out check; the call asked for an H200 and was
lent an H100. The networks are validation/h200/: the seventh set's 3-D U-Net
and the second set's 2-D U-Net, at other widths and sizes. Passed
to ``traces/capture/capture.py`` as ``FILE.py:FUNC``; plain PyTorch, random
weights and inputs.

| builder | what |
| --- | --- |
| unet3d_w24_train | 3-D U-Net (h200/heldout7: two 3x3x3 convolutions with batch norm and ReLU per level, 4 levels) from 24 channels, batch 1 x 1 x 112^3, bf16 autocast, NCDHW, Adam |
| unet2d_c32_train | 2-D U-Net (h200/heldout2: group norm and SiLU, 4 levels) at 32, 64, 128, 256 channels, batch 16 x 3 x 256^2, bf16 autocast, channels-last, fused AdamW |
"""
import importlib.util
import os

import torch
import torch.nn.functional as F

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, folder):
    path = os.path.join(_HERE, "..", "..", "h200", folder, "workloads.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_h3 = _load("_heldout3", "heldout3")
_opts, _train_step, _meta = _h3._opts, _h3._train_step, _h3._meta


def unet3d_w24_train(device, **kw):
    h7 = _load("_heldout7", "heldout7")
    return h7.unet3d_train(device, **{"batch": 1, "size": 112, "width": 24, **kw})


def unet2d_c32_train(device, **kw):
    h2 = _load("_heldout2", "heldout2")
    o = _opts(kw, {"batch": 16, "image": 256})
    torch.manual_seed(0)
    model = h2._UNet(ch=(32, 64, 128, 256)).to(device).to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.mse_loss(model(x).float(), x), device)
    return {"step": step, "meta": _meta(model, o, "U-Net, 4 levels 32-256 channels, group norm, channels-last")}
