"""Sixth set of held-out H200 workloads (docs/validation.md, "Kernels of no
known family"): networks whose GPU time leans on kernels of the class
`other` (gathers, scatters, sorts, upsampling), written and captured on
2026-12-05 after the fallback fraction of that class was set
(`fallback_other_bandwidth_fraction`), as its held-out check on networks no
rule had seen. Passed to ``traces/capture/capture.py`` as ``FILE.py:FUNC``;
random weights and inputs, no download.

| builder | what |
| --- | --- |
| gnn_train | GraphSAGE-shaped message passing in plain PyTorch: 3 layers of index_select gathers and index_add_ scatters over 4M random edges of a 200k-node graph, 128 features, fp32, fused Adam |
| deeplab_train | DeepLabV3-ResNet-50 segmentation (torchvision: dilated convolutions, ASPP, bilinear upsampling), batch 8 x 256 x 256, 21 classes, bf16 autocast, channels-last, SGD |
| sample_generate | GPT-2 small (transformers GPT2LMHeadModel from its config) sampling 32 tokens with top-k 50 and top-p 0.9 (sorts) after a 64-token prompt, batch 8, bf16 weights |
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


class _Sage(nn.Module):
    def __init__(self, dim, layers, classes):
        super().__init__()
        self.lins = nn.ModuleList(nn.Linear(2 * dim, dim) for _ in range(layers))
        self.out = nn.Linear(dim, classes)

    def forward(self, x, src, dst, inv_deg):
        h = x
        for lin in self.lins:
            agg = torch.zeros_like(h).index_add_(0, dst, h.index_select(0, src)) * inv_deg
            h = F.relu(lin(torch.cat([h, agg], 1)))
        return self.out(h)


def gnn_train(device, **kw):
    o = _opts(kw, {"nodes": 200000, "edges": 4000000, "dim": 128, "layers": 3, "classes": 16})
    torch.manual_seed(0)
    model = _Sage(o["dim"], o["layers"], o["classes"]).to(device)
    x = torch.randn(o["nodes"], o["dim"], device=device)
    src = torch.randint(0, o["nodes"], (o["edges"],), device=device)
    dst = torch.randint(0, o["nodes"], (o["edges"],), device=device)
    deg = torch.zeros(o["nodes"], device=device).index_add_(0, dst, torch.ones(o["edges"], device=device))
    inv_deg = (1.0 / deg.clamp(min=1)).unsqueeze(1)
    y = torch.randint(0, o["classes"], (o["nodes"],), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x, src, dst, inv_deg), y), device, amp=False)
    return {"step": step, "meta": _meta(model, o, "GraphSAGE-shaped message passing (plain PyTorch)",
                                        dtype="fp32", optimizer="Adam (fused)")}


def deeplab_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 8, "image": 256, "classes": 21})
    torch.manual_seed(0)
    model = torchvision.models.segmentation.deeplabv3_resnet50(
        weights=None, weights_backbone=None, num_classes=o["classes"], aux_loss=False)
    model = model.to(device).to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, o["classes"], (o["batch"], o["image"], o["image"]), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x)["out"], y), device)
    return {"step": step, "meta": _meta(model, o, "DeepLabV3-ResNet-50 (torchvision), channels-last",
                                        optimizer="SGD(momentum 0.9)")}


def sample_generate(device, **kw):
    from transformers import GPT2Config, GPT2LMHeadModel
    o = _opts(kw, {"batch": 8, "prompt": 64, "new_tokens": 32})
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config()).to(device, torch.bfloat16).eval()
    ids = torch.randint(0, 50257, (o["batch"], o["prompt"]), device=device)
    mask = torch.ones_like(ids)

    def step():
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=o["new_tokens"],
                                 min_new_tokens=o["new_tokens"], do_sample=True, top_k=50, top_p=0.9,
                                 pad_token_id=0)
        return out[:, -1].float()
    return {"step": step, "meta": _meta(model, o, "GPT-2 small (transformers), sampling generate",
                                        dtype="bf16 weights", optimizer="none")}
