"""Second set of held-out H200 workloads (docs/validation.md, "Held-out
workloads, second set"): written after the L2 rule of 2026-12-03 was set and
captured once, to check it and everything before it on models no rule had
seen. Passed to ``traces/capture/capture.py`` as ``FILE.py:FUNC``, like the
first set (``validation/h200/heldout/workloads.py``, whose helpers this file
reuses). Random weights and inputs; Hugging Face models from their configs.

| builder | what |
| --- | --- |
| hf_llama_train | Llama (transformers LlamaForCausalLM), 8 layers d1024, GQA 16/4, batch 4 x 512, bf16 autocast, fused AdamW |
| hf_bert_train | BERT-base (transformers BertForMaskedLM), batch 8 x 128: small batch, bf16 autocast, fused AdamW |
| resnet18_train | ResNet-18 (torchvision), batch 32 x 224, bf16 autocast, channels-last, SGD |
| unet_train | a 4-level U-Net (plain PyTorch: conv, group norm, SiLU, upsampling), batch 8 x 128^2, bf16 autocast, AdamW |
| gru_train | 2-layer GRU language model (cuDNN), fp32, batch 32 x 256, d 768, Adam |
| distilbert_infer | DistilBERT (transformers), inference, batch 64 x 256, bf16 |
"""
import importlib.util
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

_spec = importlib.util.spec_from_file_location(
    "_heldout1", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "heldout", "workloads.py"))
_h1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h1)
_opts, _n_params, _bf16, _train_step = _h1._opts, _h1._n_params, _h1._bf16, _h1._train_step


def _meta(model, o, what, dtype="fp32 params, bf16 autocast", optimizer="AdamW (fused)"):
    return {"model": what, "n_params": _n_params(model), **o, "dtype": dtype, "optimizer": optimizer}


def hf_llama_train(device, **kw):
    from transformers import LlamaConfig, LlamaForCausalLM
    o = _opts(kw, {"batch": 4, "seq": 512})
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                      num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048)
    model = LlamaForCausalLM(cfg).to(device)
    ids = torch.randint(0, cfg.vocab_size, (o["batch"], o["seq"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(input_ids=ids, labels=ids).loss, device)
    return {"step": step, "meta": _meta(model, o, "Llama 8 x d1024 (transformers LlamaForCausalLM)")}


def hf_bert_train(device, **kw):
    from transformers import BertConfig, BertForMaskedLM
    o = _opts(kw, {"batch": 8, "seq": 128})
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig()).to(device)
    ids = torch.randint(0, model.config.vocab_size, (o["batch"], o["seq"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(input_ids=ids, labels=ids).loss, device)
    return {"step": step, "meta": _meta(model, o, "BERT-base (transformers BertForMaskedLM)")}


def resnet18_train(device, **kw):
    import torchvision
    o = _opts(kw, {"batch": 32, "image": 224})
    model = torchvision.models.resnet18(weights=None).to(device).to(memory_format=torch.channels_last)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    step = _train_step(model, opt, lambda: F.cross_entropy(model(x), y), device)
    return {"step": step, "meta": _meta(model, o, "ResNet-18 (torchvision), channels-last",
                                        optimizer="SGD(momentum 0.9)")}


class _Block(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.n1 = nn.GroupNorm(8, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.n2 = nn.GroupNorm(8, cout)

    def forward(self, x):
        x = F.silu(self.n1(self.c1(x)))
        return F.silu(self.n2(self.c2(x)))


class _UNet(nn.Module):
    def __init__(self, ch=(64, 128, 256, 512)):
        super().__init__()
        self.inp = nn.Conv2d(3, ch[0], 3, padding=1)
        self.down = nn.ModuleList(_Block(a, b) for a, b in zip((ch[0],) + ch[:-1], ch))
        self.up = nn.ModuleList(_Block(b + a, a) for a, b in zip(ch[:-1][::-1], ch[1:][::-1]))
        self.out = nn.Conv2d(ch[0], 3, 1)

    def forward(self, x):
        x = self.inp(x)
        skips = []
        for i, b in enumerate(self.down):
            x = b(x)
            if i < len(self.down) - 1:
                skips.append(x)
                x = F.avg_pool2d(x, 2)
        for b in self.up:
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            x = b(torch.cat([x, skips.pop()], dim=1))
        return self.out(x)


def unet_train(device, **kw):
    o = _opts(kw, {"batch": 8, "image": 128})
    torch.manual_seed(0)
    model = _UNet().to(device)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.mse_loss(model(x), x), device)
    return {"step": step, "meta": _meta(model, o, "U-Net, 4 levels 64-512 channels, group norm")}


class _GruLM(nn.Module):
    def __init__(self, vocab, d, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.GRU(d, d, num_layers=layers, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, idx):
        h, _ = self.rnn(self.emb(idx))
        return self.out(h)


def gru_train(device, **kw):
    o = _opts(kw, {"batch": 32, "seq": 256, "d": 768, "layers": 2, "vocab": 8000})
    model = _GruLM(o["vocab"], o["d"], o["layers"]).to(device)
    idx = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def loss():
        return F.cross_entropy(model(idx[:, :-1]).flatten(0, 1), idx[:, 1:].flatten())
    step = _train_step(model, opt, loss, device, amp=False)
    return {"step": step, "meta": _meta(model, o, "GRU language model (nn.GRU, cuDNN)", dtype="fp32",
                                        optimizer="Adam (foreach)")}


def distilbert_infer(device, **kw):
    from transformers import DistilBertConfig, DistilBertModel
    o = _opts(kw, {"batch": 64, "seq": 256})
    torch.manual_seed(0)
    model = DistilBertModel(DistilBertConfig()).to(device).to(torch.bfloat16).eval()
    ids = torch.randint(0, model.config.vocab_size, (o["batch"], o["seq"]), device=device)

    def step():
        with torch.no_grad():
            model(input_ids=ids)
    return {"step": step, "meta": {"model": "DistilBERT (transformers DistilBertModel), inference",
                                   "n_params": _n_params(model), **o, "dtype": "bf16", "optimizer": "none"}}
