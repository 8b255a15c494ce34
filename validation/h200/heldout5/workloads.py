"""Fifth set of held-out H200 workloads (docs/validation.md, "Held-out
workloads, fifth set"): written and captured on 2026-12-05 with every rule of
dvfsim frozen, as a check on operator families no capture had before —
shifted-window attention, dense concatenation, 3-D and 1-D convolutions,
embedding bags, and Hugging Face generation of a Llama-shaped decoder — and
fp16 convolution inference. Passed to ``traces/capture/capture.py`` as
``FILE.py:FUNC``; torchvision constructors and transformers configs (random
weights, no download), random inputs.

| builder | what |
| --- | --- |
| swin_train | Swin-T (torchvision: shifted-window attention, layer norm, GELU), batch 64 x 224, bf16 autocast, fused AdamW |
| densenet_train | DenseNet-121 (torchvision: batch norm, ReLU, concatenation per layer), batch 64 x 224, bf16 autocast, channels-last, SGD |
| r3d_train | R3D-18 video network (torchvision: 3-D convolutions, batch norm), batch 8 x 3 x 16 x 112 x 112, bf16 autocast, SGD |
| wav2vec2_train | wav2vec 2.0 base encoder (transformers Wav2Vec2Model: 1-D convolution feature encoder with group norm, 12 post-LN layers), batch 4 x 4 s at 16 kHz, bf16 autocast, fused AdamW, loss the mean square of the output |
| dlrm_train | DLRM-shaped recommender in plain PyTorch: 8 EmbeddingBag tables (100k x 64, 20 lookups per bag), bottom and top MLPs, pairwise dot interaction, batch 2048, fp32, SGD |
| llama_generate | Llama-shaped decoder (transformers LlamaForCausalLM: 8 layers, d1024, 16 heads, 4 KV heads, SwiGLU 2816) generating 32 tokens greedily after a 128-token prompt, batch 1, bf16 weights (launch-bound decode through `generate`) |
| wide_resnet_infer_fp16 | Wide ResNet-50-2 (torchvision), inference, fp16 weights, batch 128 x 224, channels-last |
| resnet18_nchw_train | ResNet-18 (torchvision) in the default NCHW layout (batch norm's NCHW kernels, as R3D-18's), batch 128 x 224, bf16 autocast, SGD (run2.sh: written after R3D-18's capture, before any rule on those kernels) |
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
_opts, _vision_train, _train_step, _meta = _h3._opts, _h3._vision_train, _h3._train_step, _h3._meta


def swin_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 64, "image": 224})
    torch.manual_seed(0)
    model = torchvision.models.swin_t(weights=None).to(device)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, "Swin-T (torchvision)")}


def densenet_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 64, "image": 224})
    torch.manual_seed(0)
    return _vision_train(device, torchvision.models.densenet121, o, "DenseNet-121 (torchvision), channels-last",
                         sgd=True)


def r3d_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 8, "frames": 16, "image": 112})
    torch.manual_seed(0)
    model = torchvision.models.video.r3d_18(weights=None).to(device)
    x = torch.randn(o["batch"], 3, o["frames"], o["image"], o["image"], device=device)
    y = torch.randint(0, 400, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, "R3D-18 (torchvision video)", optimizer="SGD(momentum 0.9)")}


def wav2vec2_train(device, **kw):
    from transformers import Wav2Vec2Config, Wav2Vec2Model
    o = _opts(kw, {"batch": 4, "samples": 64000})
    torch.manual_seed(0)
    # no layer drop, no SpecAugment: every step runs the same kernels
    model = Wav2Vec2Model(Wav2Vec2Config(layerdrop=0.0, apply_spec_augment=False)).to(device)
    model.train()
    x = torch.randn(o["batch"], o["samples"], device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(x).last_hidden_state.float().pow(2).mean(), device)
    return {"step": step, "meta": _meta(model, o, "wav2vec 2.0 base (transformers Wav2Vec2Model)")}


class _DLRM(nn.Module):
    def __init__(self, tables, rows, dim, dense_in):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum") for _ in range(tables))
        self.bot = nn.Sequential(nn.Linear(dense_in, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                 nn.Linear(256, dim), nn.ReLU())
        n = tables + 1
        li, lj = torch.tril_indices(n, n, -1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                                 nn.ReLU(), nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 1))

    def forward(self, dense, idx, offsets):
        x = self.bot(dense)
        t = torch.stack([x] + [e(idx[i], offsets) for i, e in enumerate(self.emb)], 1)
        z = torch.bmm(t, t.transpose(1, 2))[:, self.li, self.lj]
        return self.top(torch.cat([x, z], 1)).squeeze(1)


def dlrm_train(device, **kw):
    o = _opts(kw, {"batch": 2048, "tables": 8, "rows": 100000, "dim": 64, "lookups": 20})
    torch.manual_seed(0)
    model = _DLRM(o["tables"], o["rows"], o["dim"], 13).to(device)
    b, n = o["batch"], o["lookups"]
    dense = torch.randn(b, 13, device=device)
    idx = torch.randint(0, o["rows"], (o["tables"], b * n), device=device)
    offsets = torch.arange(0, b * n, n, device=device)
    y = torch.randint(0, 2, (b,), device=device).float()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = _train_step(model, opt, lambda: F.binary_cross_entropy_with_logits(model(dense, idx, offsets), y),
                       device, amp=False)
    return {"step": step, "meta": _meta(model, o, "DLRM-shaped recommender (plain PyTorch)", dtype="fp32",
                                        optimizer="SGD")}


def llama_generate(device, **kw):
    from transformers import LlamaConfig, LlamaForCausalLM
    o = _opts(kw, {"batch": 1, "prompt": 128, "new_tokens": 32})
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                      num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=1024)
    model = LlamaForCausalLM(cfg).to(device, torch.bfloat16).eval()
    ids = torch.randint(0, cfg.vocab_size, (o["batch"], o["prompt"]), device=device)
    mask = torch.ones_like(ids)

    def step():
        with torch.inference_mode():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=o["new_tokens"],
                                 min_new_tokens=o["new_tokens"], do_sample=False, pad_token_id=0)
        # a finite check on what was generated: the last position's logits are not kept
        return out[:, -1].float()
    return {"step": step, "meta": _meta(model, o, "Llama-shaped decoder (transformers), greedy generate",
                                        dtype="bf16 weights", optimizer="none")}


def wide_resnet_infer_fp16(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 128, "image": 224})
    torch.manual_seed(0)
    model = torchvision.models.wide_resnet50_2(weights=None).eval().to(device, torch.float16)
    model = model.to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device, dtype=torch.float16)
    x = x.to(memory_format=torch.channels_last)

    def step():
        with torch.inference_mode():
            return model(x).float().sum()
    return {"step": step, "meta": _meta(model, o, "Wide ResNet-50-2 (torchvision) inference, channels-last",
                                        dtype="fp16 weights", optimizer="none")}


def resnet18_nchw_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 128, "image": 224})
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).to(device)  # NCHW: no channels_last
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, "ResNet-18 (torchvision), NCHW", optimizer="SGD(momentum 0.9)")}
