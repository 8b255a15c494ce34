"""Eighth set of held-out workloads (docs/validation.md, "Held-out
workloads, eighth set"): two classes no capture had covered, written on
2026-12-06 and captured once with nothing changed for them (the call asked
for an H200 and was lent an H100): a diffusion
U-Net (group norm, SiLU, timestep embedding, self-attention on feature maps,
NCHW as diffusion code runs it) and a Whisper-shaped speech encoder-decoder
(1-D convolution front end, pre-LN transformer, cross-attention). Passed to
``traces/capture/capture.py`` as ``FILE.py:FUNC``; plain PyTorch and a
Hugging Face config, random weights and inputs, no download.

| builder | what |
| --- | --- |
| ddpm_unet_train | DDPM-shaped U-Net in plain PyTorch (128 channels, multipliers 1, 2, 2, 2 at 64, 32, 16, 8 pixels, two residual blocks a level with GroupNorm(32) and SiLU, self-attention at 16 and 8 pixels through SDPA, nearest upsampling), batch 64 x 3 x 64 x 64, noise-prediction MSE loss, bf16 autocast, NCHW, fused AdamW |
| whisper_train | Whisper-small-shaped model (transformers WhisperForConditionalGeneration from a config: d768, 12 + 12 layers, 12 heads, FFN 3072, two 1-D convolutions over 80 mel bins), batch 32 x 3000 frames, 128 label tokens, bf16 autocast, fused AdamW |
"""
import importlib.util
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "_heldout3", os.path.join(_HERE, "..", "..", "h200", "heldout3", "workloads.py"))
_h3 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h3)
_opts, _train_step, _meta = _h3._opts, _h3._train_step, _h3._meta


def _timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class _ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x)))
        h = h + self.t(F.silu(temb))[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return h + self.skip(x)


class _Attention(nn.Module):
    def __init__(self, c, heads=4):
        super().__init__()
        self.n, self.qkv, self.o, self.heads = nn.GroupNorm(32, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1), heads

    def forward(self, x):
        b, c, h, w = x.shape
        qkv = self.qkv(self.n(x)).reshape(b, 3, self.heads, c // self.heads, h * w).transpose(-1, -2)
        a = F.scaled_dot_product_attention(qkv[:, 0], qkv[:, 1], qkv[:, 2])  # b, heads, hw, d
        return x + self.o(a.transpose(-1, -2).reshape(b, c, h, w))


class _DDPMUNet(nn.Module):
    def __init__(self, ch=128, mult=(1, 2, 2, 2), blocks=2, attn_levels=(2, 3), cin=3):
        super().__init__()
        tdim = 4 * ch
        self.ch = ch
        self.temb = nn.Sequential(nn.Linear(ch, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inc = nn.Conv2d(cin, ch, 3, padding=1)
        self.down, skips, c = nn.ModuleList(), [ch], ch
        for lvl, m in enumerate(mult):
            for _ in range(blocks):
                self.down.append(nn.ModuleList([_ResBlock(c, ch * m, tdim)] +
                                               ([_Attention(ch * m)] if lvl in attn_levels else [])))
                c = ch * m
                skips.append(c)
            if lvl != len(mult) - 1:
                self.down.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
                skips.append(c)
        self.mid = nn.ModuleList([_ResBlock(c, c, tdim), _Attention(c), _ResBlock(c, c, tdim)])
        self.up = nn.ModuleList()
        for lvl, m in reversed(list(enumerate(mult))):
            for _ in range(blocks + 1):
                self.up.append(nn.ModuleList([_ResBlock(c + skips.pop(), ch * m, tdim)] +
                                             ([_Attention(ch * m)] if lvl in attn_levels else [])))
                c = ch * m
            if lvl != 0:
                self.up.append(nn.Conv2d(c, c, 3, padding=1))  # after a 2x nearest upsampling
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, cin, 3, padding=1))

    def forward(self, x, t):
        temb = self.temb(_timestep_embedding(t, self.ch))
        h = self.inc(x)
        hs = [h]
        for mod in self.down:
            if isinstance(mod, nn.Conv2d):
                h = mod(h)
            else:
                h = mod[0](h, temb)
                for a in mod[1:]:
                    h = a(h)
            hs.append(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, temb)), temb)
        for mod in self.up:
            if isinstance(mod, nn.Conv2d):
                h = mod(F.interpolate(h, scale_factor=2.0, mode="nearest"))
            else:
                h = mod[0](torch.cat([h, hs.pop()], 1), temb)
                for a in mod[1:]:
                    h = a(h)
        return self.out(h)


def ddpm_unet_train(device, **kw):
    o = _opts(kw, {"batch": 64, "image": 64})
    torch.manual_seed(0)
    model = _DDPMUNet().to(device)
    x0 = torch.randn(o["batch"], 3, o["image"], o["image"], device=device)
    noise = torch.randn_like(x0)
    t = torch.randint(0, 1000, (o["batch"],), device=device)
    abar = torch.cos(t.float() / 1000 * math.pi / 2)[:, None, None, None] ** 2
    xt = abar.sqrt() * x0 + (1 - abar).sqrt() * noise
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.mse_loss(model(xt, t).float(), noise), device)
    return {"step": step, "meta": _meta(model, o, "DDPM-shaped U-Net (plain PyTorch, GroupNorm, SDPA), NCHW")}


def whisper_train(device, **kw):
    from transformers import WhisperConfig, WhisperForConditionalGeneration
    o = _opts(kw, {"batch": 32, "frames": 3000, "tokens": 128})
    torch.manual_seed(0)
    cfg = WhisperConfig(d_model=768, encoder_layers=12, decoder_layers=12, encoder_attention_heads=12,
                        decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
                        num_mel_bins=80, max_source_positions=o["frames"] // 2, dropout=0.0,
                        encoder_layerdrop=0.0, decoder_layerdrop=0.0, apply_spec_augment=False)
    model = WhisperForConditionalGeneration(cfg).to(device)
    model.train()
    feats = torch.randn(o["batch"], 80, o["frames"], device=device)
    labels = torch.randint(0, cfg.vocab_size - 200, (o["batch"], o["tokens"]), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: model(input_features=feats, labels=labels).loss, device)
    return {"step": step, "meta": _meta(model, o, "Whisper-small-shaped (transformers WhisperForConditionalGeneration)")}
