"""Held-out H200 workloads (docs/validation.md, "Held-out workloads"): models
no rule of dvfsim was fitted or checked on before they were captured, written
the way a user brings a workload to ``traces/capture/capture.py``, as a file:

    python3 traces/capture/capture.py \\
        --workload validation/h200/heldout/workloads.py:vit_train --out OUT --tag vit_b16_train_b64

Random weights and inputs; torchvision and Hugging Face transformers models
are built from their constructors and configs (no download). Each builder
takes ``(device, **options)`` (options as strings, ``--arg key=value``) and
returns ``{"step": callable, "meta": {...}}``.

| builder | what |
| --- | --- |
| vit_train | ViT-B/16 (torchvision), bf16 autocast, fused AdamW |
| mobilenet_train | MobileNetV3-Large (torchvision: depthwise convolutions, hard-swish, SE), bf16 autocast, channels-last, SGD |
| hf_gpt2_train | GPT-2 small (transformers GPT2LMHeadModel), bf16 autocast, fused AdamW |
| hf_t5_train | T5-small encoder-decoder (transformers), bf16 autocast, fused AdamW |
| lstm_train | 2-layer LSTM language model (cuDNN RNN), fp32 |
| mlp_train | 4-layer MLP, fp32, Adam (foreach): many tiny kernels |
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _opts(given, defaults):
    out = dict(defaults)
    for k, v in given.items():
        if k not in defaults:
            raise ValueError(f"unknown option '{k}' (known: {', '.join(sorted(defaults))})")
        d = defaults[k]
        out[k] = (str(v).lower() in ("1", "true", "yes", "on")) if isinstance(d, bool) else type(d)(v)
    return out


def _n_params(model):
    return sum(p.numel() for p in model.parameters())


def _bf16(device):
    return torch.autocast(device.type, dtype=torch.bfloat16)


def _train_step(model, opt, loss_fn, device, amp=True):
    def step():
        if amp:
            with _bf16(device):
                loss = loss_fn()
        else:
            loss = loss_fn()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        # capture.py checks it is finite (since 2026-12-05; the captures of
        # this folder and the later ones that share this step predate it)
        return loss.detach()
    return step


def vit_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 64, "image": 224})
    model = torchvision.models.vit_b_16(weights=None).to(device)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": {"model": "ViT-B/16 (torchvision)", "n_params": _n_params(model),
                                   **o, "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW (fused)"}}


def mobilenet_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 128, "image": 224})
    model = torchvision.models.mobilenet_v3_large(weights=None).to(device)
    model = model.to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": {"model": "MobileNetV3-Large (torchvision)", "n_params": _n_params(model),
                                   **o, "dtype": "fp32 params, bf16 autocast, channels-last",
                                   "optimizer": "SGD(momentum 0.9)"}}


def hf_gpt2_train(device, **kw):
    from transformers import GPT2Config, GPT2LMHeadModel
    o = _opts(kw, {"batch": 8, "seq": 1024})
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_positions=max(1024, o["seq"]))).to(device)
    ids = torch.randint(0, model.config.vocab_size, (o["batch"], o["seq"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(input_ids=ids, labels=ids).loss, device)
    return {"step": step, "meta": {"model": "GPT-2 small (transformers GPT2LMHeadModel)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW (fused)"}}


def hf_t5_train(device, **kw):
    from transformers import T5Config, T5ForConditionalGeneration
    o = _opts(kw, {"batch": 16, "seq": 512, "target": 128})
    torch.manual_seed(0)
    cfg = T5Config(d_model=512, d_ff=2048, num_layers=6, num_heads=8, d_kv=64, vocab_size=32128,
                   decoder_start_token_id=0, pad_token_id=0)
    model = T5ForConditionalGeneration(cfg).to(device)
    src = torch.randint(1, cfg.vocab_size, (o["batch"], o["seq"]), device=device)
    tgt = torch.randint(1, cfg.vocab_size, (o["batch"], o["target"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(input_ids=src, labels=tgt).loss, device)
    return {"step": step, "meta": {"model": "T5-small (transformers T5ForConditionalGeneration)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW (fused)"}}


class _LstmLM(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, d, num_layers=layers, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, idx):
        h, _ = self.rnn(self.emb(idx))
        return self.out(h)


def lstm_train(device, **kw):
    o = _opts(kw, {"batch": 64, "seq": 128, "d": 1024, "layers": 2, "vocab": 10000})
    model = _LstmLM(o["vocab"], o["d"], o["layers"]).to(device)
    idx = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss():
        return F.cross_entropy(model(idx[:, :-1]).flatten(0, 1), idx[:, 1:].flatten())
    step = _train_step(model, opt, loss, device, amp=False)
    return {"step": step, "meta": {"model": "LSTM language model (nn.LSTM, cuDNN)",
                                   "n_params": _n_params(model), **o, "dtype": "fp32",
                                   "optimizer": "Adam (foreach)"}}


def mlp_train(device, **kw):
    o = _opts(kw, {"batch": 32, "width": 512, "layers": 4})
    dims = [256] + [o["width"]] * o["layers"]
    mods = []
    for a, b in zip(dims, dims[1:]):
        mods += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*mods, nn.Linear(dims[-1], 10)).to(device)
    x = torch.randn(o["batch"], 256, device=device)
    y = torch.randint(0, 10, (o["batch"],), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device, amp=False)
    return {"step": step, "meta": {"model": "MLP", "n_params": _n_params(model), **o, "dtype": "fp32",
                                   "optimizer": "Adam (foreach)"}}
