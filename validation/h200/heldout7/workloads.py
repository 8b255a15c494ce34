"""Seventh set of held-out H200 workloads (docs/validation.md, "Held-out
workloads, seventh set"): convolutions in the layouts and dimensions that make
cuDNN add layout transforms and SIMT kernels around its tensor-core ones —
3-D video and volumetric networks, NCHW segmentation with bilinear
upsampling, and an fp32 NCHW ResNet-50 — written and captured on 2026-12-05
after the rules for cuDNN's layout transforms and SIMT implicit convolutions
were set (fitted on R3D-18 of the fifth set alone), as their held-out check.
Passed to ``traces/capture/capture.py`` as ``FILE.py:FUNC``; torchvision
constructors and plain PyTorch, random weights and inputs, no download.

| builder | what |
| --- | --- |
| mc3_train | MC3-18 video network (torchvision: 3-D convolutions in the first stages, then (1, 3, 3) ones), batch 8 x 3 x 16 x 112 x 112, bf16 autocast, NCDHW, SGD |
| r2plus1d_train | R(2+1)D-18 (torchvision: each 3-D convolution factored into a spatial (1, 3, 3) and a temporal (3, 1, 1) one), batch 8 x 3 x 16 x 112 x 112, bf16 autocast, NCDHW, SGD |
| unet3d_train | 3-D U-Net in plain PyTorch (two 3x3x3 convolutions with batch norm and ReLU per level, 4 levels from 16 channels, max pooling, trilinear upsampling, concatenation), batch 2 x 1 x 96^3, bf16 autocast, NCDHW, Adam |
| fcn_train | FCN-ResNet-50 segmentation (torchvision: dilated ResNet-50, bilinear upsampling), batch 8 x 256 x 256, 21 classes, bf16 autocast, the default NCHW layout, SGD |
| resnet50_fp32_nchw_train | ResNet-50 (torchvision) in fp32 (TF32 convolutions, PyTorch's default), NCHW, batch 64 x 224, SGD |
"""
import importlib.util
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

_spec = importlib.util.spec_from_file_location(
    "_heldout3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "heldout3", "workloads.py"))
_h3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h3)
_opts, _train_step, _meta = _h3._opts, _h3._train_step, _h3._meta


def _video_train(device, ctor, o, what):
    torch.manual_seed(0)
    model = ctor(weights=None).to(device)
    x = torch.randn(o["batch"], 3, o["frames"], o["image"], o["image"], device=device)
    y = torch.randint(0, 400, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, what, optimizer="SGD(momentum 0.9)")}


def mc3_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 8, "frames": 16, "image": 112})
    return _video_train(device, torchvision.models.video.mc3_18, o, "MC3-18 (torchvision video)")


def r2plus1d_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 8, "frames": 16, "image": 112})
    return _video_train(device, torchvision.models.video.r2plus1d_18, o, "R(2+1)D-18 (torchvision video)")


class _Block3d(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(inplace=True),
                         nn.Conv3d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(inplace=True))


class _UNet3d(nn.Module):
    def __init__(self, cin=1, width=16, levels=4, classes=3):
        super().__init__()
        ch = [width * 2 ** i for i in range(levels)]
        self.down = nn.ModuleList(_Block3d(a, b) for a, b in zip([cin] + ch[:-1], ch))
        self.up = nn.ModuleList(_Block3d(ch[i] + ch[i + 1], ch[i]) for i in reversed(range(levels - 1)))
        self.head = nn.Conv3d(ch[0], classes, 1)

    def forward(self, x):
        skips = []
        for i, blk in enumerate(self.down):
            x = blk(x if i == 0 else F.max_pool3d(x, 2))
            skips.append(x)
        for blk, skip in zip(self.up, reversed(skips[:-1])):
            x = F.interpolate(x, size=skip.shape[2:], mode="trilinear", align_corners=False)
            x = blk(torch.cat([x, skip], 1))
        return self.head(x)


def unet3d_train(device, **kw):
    o = _opts(kw, {"batch": 2, "size": 96, "classes": 3, "width": 16})
    torch.manual_seed(0)
    model = _UNet3d(width=o["width"], classes=o["classes"]).to(device)
    s = o["size"]
    x = torch.randn(o["batch"], 1, s, s, s, device=device)
    y = torch.randint(0, o["classes"], (o["batch"], s, s, s), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, "3-D U-Net (plain PyTorch)", optimizer="Adam")}


def fcn_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 8, "image": 256, "classes": 21})
    torch.manual_seed(0)
    model = torchvision.models.segmentation.fcn_resnet50(
        weights=None, weights_backbone=None, num_classes=o["classes"], aux_loss=False).to(device)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    y = torch.randint(0, o["classes"], (o["batch"], o["image"], o["image"]), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x)["out"], y), device)
    return {"step": step, "meta": _meta(model, o, "FCN-ResNet-50 (torchvision), NCHW", optimizer="SGD(momentum 0.9)")}


def resnet50_fp32_nchw_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 64, "image": 224})
    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).to(device)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device, amp=False)
    return {"step": step, "meta": _meta(model, o, "ResNet-50 (torchvision), NCHW", dtype="fp32 (TF32 convolutions)",
                                        optimizer="SGD(momentum 0.9)")}
