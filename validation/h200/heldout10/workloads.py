"""Tenth set of held-out workloads (docs/validation.md, "Held-out workloads,
tenth set"): a detection network, the first capture with region proposals,
RoIAlign and non-maximum suppression (data-dependent shapes, host
synchronisation inside the step). Passed to ``traces/capture/capture.py`` as
``FILE.py:FUNC``; torchvision's constructor, random weights, images and
boxes (no download).

| builder | what |
| --- | --- |
| fasterrcnn_train | Faster R-CNN, ResNet-50 FPN backbone (torchvision), batch 4 x 3 x 512^2, 8 random boxes an image, bf16 autocast, SGD |
"""
import importlib.util
import os

import torch

_spec = importlib.util.spec_from_file_location(
    "_heldout", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "heldout", "workloads.py"))
_h1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h1)
_n_params, _opts, _train_step = _h1._n_params, _h1._opts, _h1._train_step


def fasterrcnn_train(device, **kw):
    from torchvision.models.detection import fasterrcnn_resnet50_fpn
    o = _opts(kw, {"batch": 4, "image": 512, "boxes": 8})
    torch.manual_seed(0)
    n = o["image"]
    model = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=91,
                                    min_size=n, max_size=n).to(device)
    model.train()
    g = torch.Generator().manual_seed(0)
    images = [torch.rand(3, n, n, generator=g).to(device) for _ in range(o["batch"])]
    targets = []
    for _ in range(o["batch"]):
        xy = torch.rand(o["boxes"], 2, generator=g) * (0.6 * n)
        wh = torch.rand(o["boxes"], 2, generator=g) * (0.35 * n) + 16
        targets.append({"boxes": torch.cat([xy, xy + wh], 1).to(device),
                        "labels": torch.randint(1, 91, (o["boxes"],), generator=g).to(device)})
    opt = torch.optim.SGD(model.parameters(), lr=2e-3, momentum=0.9, weight_decay=1e-4)

    def loss():
        return sum(model(images, targets).values())
    step = _train_step(model, opt, loss, device)
    return {"step": step, "meta": {"model": "Faster R-CNN ResNet-50 FPN (torchvision)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast", "optimizer": "SGD(momentum 0.9)"}}
