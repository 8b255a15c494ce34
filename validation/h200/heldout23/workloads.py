"""Twenty-third call's held-out workloads (docs/validation.md, "Held-out
workloads, classes no capture had covered"): five kinds of step no earlier
capture ran, written on 2026-12-07 with the model as it stood and captured
once, nothing changed for them. Passed to ``traces/capture/capture.py`` as
``FILE.py:FUNC``; plain PyTorch, random weights and inputs, no download.
GPU-bound shapes, so that their time does not rest on the profiler's host
stretch.

| builder | what |
| --- | --- |
| int8_mlp_infer | W8A8 inference of a 4-layer MLP (4096 -> 16384 -> 4096) on 8192 tokens: per-token int8 quantisation, ``torch._int_mm`` (int8 tensor cores, int32 out), dequantisation and GELU in bf16 |
| ssd_train | Mamba-2-shaped state-space model (8 layers, d 768, 24 heads of 64, state 64) whose selective scan is the chunked form in plain PyTorch (cumsum, exp, masked segment sums, four einsums), batch 8 x 2048 tokens, bf16 autocast, fused AdamW |
| vae_decode | Stable-Diffusion-shaped VAE decoder (GroupNorm(32), SiLU, 3x3 convolutions at 512/512/256/128 channels, one single-head attention at 64 x 64, three nearest 2x upsamplings), 4 latents of 4 x 64 x 64 to 512 x 512 images, fp16 weights, NCHW, inference |
| dcgan_train | DCGAN (transposed-convolution generator, strided-convolution discriminator, batch norm, LeakyReLU), batch 1024 of 64 x 64, a discriminator and a generator step, bf16 autocast, NCHW, Adam |
| fno_train | 2-D Fourier neural operator (4 spectral layers of width 64 and 16 x 16 modes: rfft2, complex einsum, irfft2; 1x1 convolutions, GELU), batch 64 on a 128 x 128 grid, fp32 (cuFFT; cuDNN's TF32 default), Adam |
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
_opts, _n_params, _train_step = _h1._opts, _h1._n_params, _h1._train_step


def _meta(model, o, what, dtype, optimizer):
    return {"model": what, "n_params": _n_params(model), **o, "dtype": dtype, "optimizer": optimizer}


# -- int8 inference ----------------------------------------------------------

def _quant(t):
    """Per-row symmetric int8 and the rows' scales (fp32)."""
    s = t.abs().amax(dim=1, keepdim=True).float().clamp_min(1e-6) / 127.0
    return torch.round(t.float() / s).clamp_(-127, 127).to(torch.int8), s


def int8_mlp_infer(device, **kw):
    o = _opts(kw, {"tokens": 8192, "d": 4096, "ff": 16384, "layers": 4})
    # weights as (out, in), passed transposed: the column-major int8 operand
    # torch._int_mm takes, as int8 inference libraries pass it
    ws = [(torch.randint(-127, 128, (o["ff"], o["d"]), device=device, dtype=torch.int8),
           torch.randint(-127, 128, (o["d"], o["ff"]), device=device, dtype=torch.int8))
          for _ in range(o["layers"])]
    x0 = torch.randn(o["tokens"], o["d"], device=device, dtype=torch.bfloat16)
    s1, s2 = 1.0 / (127.0 * o["d"] ** 0.5), 1.0 / (127.0 * o["ff"] ** 0.5)

    @torch.no_grad()
    def step():
        x = x0
        for w1, w2 in ws:
            q, s = _quant(x)
            h = F.gelu((torch._int_mm(q, w1.t()).float() * (s * s1)).to(torch.bfloat16))
            q, s = _quant(h)
            x = x + (torch._int_mm(q, w2.t()).float() * (s * s2)).to(torch.bfloat16)
        return x.float().abs().mean()

    n = sum(w.numel() for pair in ws for w in pair)
    return {"step": step, "meta": {"model": "W8A8 MLP (torch._int_mm)", "n_params": n, **o,
                                   "dtype": "int8 weights and activations, int32 products, bf16 between",
                                   "optimizer": "none (inference)"}}


# -- state-space model (Mamba-2's chunked scan in plain PyTorch) --------------

def _segsum(x):
    """s[..., i, j] = x[..., j+1] + ... + x[..., i] for i >= j, -inf above."""
    t = x.size(-1)
    x = x[..., None].expand(*x.shape, t)
    below = torch.tril(torch.ones(t, t, device=x.device, dtype=torch.bool), diagonal=-1)
    s = torch.cumsum(x.masked_fill(~below, 0), dim=-2)
    return s.masked_fill(~torch.tril(torch.ones(t, t, device=x.device, dtype=torch.bool)), -torch.inf)


def _ssd(x, a, b, c, q):
    """The chunked selective scan: x (B, L, H, P) bf16, a (B, L, H) fp32 log
    decays, b and c (B, L, H, N) bf16; chunks of q tokens."""
    bs, length, h, p = x.shape
    n, k = b.shape[-1], length // q
    x, b, c = x.reshape(bs, k, q, h, p), b.reshape(bs, k, q, h, n), c.reshape(bs, k, q, h, n)
    a = a.reshape(bs, k, q, h).permute(0, 3, 1, 2)  # (B, H, K, Q)
    a_cum = torch.cumsum(a, dim=-1)
    dt = x.dtype
    decay = torch.exp(_segsum(a)).to(dt)  # (B, H, K, Q, Q)
    y = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", c, b, decay, x)
    decay_states = torch.exp(a_cum[..., -1:] - a_cum).to(dt)
    states = torch.einsum("bclhn,bhcl,bclhp->bchpn", b, decay_states, x)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    decay_chunk = torch.exp(_segsum(F.pad(a_cum[..., -1], (1, 0)))).to(dt)
    states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)[:, :-1]
    y = y + torch.einsum("bclhn,bchpn,bhcl->bclhp", c, states, torch.exp(a_cum).to(dt))
    return y.reshape(bs, length, h, p)


class _SSDBlock(nn.Module):
    def __init__(self, d, h, p, n, q):
        super().__init__()
        self.h, self.p, self.n, self.q = h, p, n, q
        self.norm = nn.RMSNorm(d)
        self.inp = nn.Linear(d, 2 * h * p + 2 * h * n + h, bias=False)
        self.a_log = nn.Parameter(torch.log(torch.linspace(1.0, 16.0, h)))
        self.dt_bias = nn.Parameter(torch.zeros(h))
        self.out = nn.Linear(h * p, d, bias=False)

    def forward(self, u):
        bs, length, _ = u.shape
        h, p, n = self.h, self.p, self.n
        z, x, b, c, dt = torch.split(self.inp(self.norm(u)), [h * p, h * p, h * n, h * n, h], dim=-1)
        with torch.autocast(u.device.type, enabled=False):
            dt = F.softplus(dt.float() + self.dt_bias)  # (B, L, H)
            a = -torch.exp(self.a_log.float()) * dt
            xs = (x.float().reshape(bs, length, h, p) * dt[..., None]).to(torch.bfloat16)
            y = _ssd(xs, a, b.reshape(bs, length, h, n).to(torch.bfloat16),
                     c.reshape(bs, length, h, n).to(torch.bfloat16), self.q)
            y = y.reshape(bs, length, h * p) * F.silu(z.to(torch.bfloat16))
        return u + self.out(y)


class _SSDModel(nn.Module):
    def __init__(self, vocab, d, layers, h, p, n, q):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(_SSDBlock(d, h, p, n, q) for _ in range(layers))
        self.norm = nn.RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        u = self.emb(tokens)
        for blk in self.blocks:
            u = blk(u)
        return self.head(self.norm(u))


def ssd_train(device, **kw):
    o = _opts(kw, {"batch": 8, "seq": 2048, "d": 768, "layers": 8, "heads": 24, "head_dim": 64,
                   "state": 64, "chunk": 64, "vocab": 32000})
    model = _SSDModel(o["vocab"], o["d"], o["layers"], o["heads"], o["head_dim"], o["state"], o["chunk"]).to(device)
    tokens = torch.randint(0, o["vocab"], (o["batch"], o["seq"] + 1), device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=device.type == "cuda")
    step = _train_step(model, opt, lambda: F.cross_entropy(
        model(tokens[:, :-1]).float().reshape(-1, o["vocab"]), tokens[:, 1:].reshape(-1)), device)
    return {"step": step, "meta": _meta(model, o, "Mamba-2-shaped SSM, chunked scan in plain PyTorch",
                                        "fp32 params, bf16 autocast, scan operands bf16", "AdamW (fused)")}


# -- VAE decoder (fp16 inference) ---------------------------------------------

class _VaeRes(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin, eps=1e-6), nn.Conv2d(cin, cout, 3, padding=1)
        self.n2, self.c2 = nn.GroupNorm(32, cout, eps=1e-6), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.c1(F.silu(self.n1(x)))
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class _VaeAttn(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n = nn.GroupNorm(32, c, eps=1e-6)
        self.q, self.k, self.v, self.o = (nn.Linear(c, c) for _ in range(4))

    def forward(self, x):
        b, c, hh, ww = x.shape
        t = self.n(x).reshape(b, c, hh * ww).transpose(1, 2)
        y = F.scaled_dot_product_attention(self.q(t)[:, None], self.k(t)[:, None], self.v(t)[:, None])[:, 0]
        return x + self.o(y).transpose(1, 2).reshape(b, c, hh, ww)


class _VaeDecoder(nn.Module):
    def __init__(self, chans=(512, 512, 256, 128), blocks=3):
        super().__init__()
        c0 = chans[0]
        self.inp = nn.Conv2d(4, c0, 3, padding=1)
        self.mid = nn.Sequential(_VaeRes(c0, c0), _VaeAttn(c0), _VaeRes(c0, c0))
        layers, cin = [], c0
        for i, c in enumerate(chans):
            for _ in range(blocks):
                layers.append(_VaeRes(cin, c))
                cin = c
            if i < len(chans) - 1:
                layers += [nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(c, c, 3, padding=1)]
        self.up = nn.Sequential(*layers)
        self.out = nn.Sequential(nn.GroupNorm(32, cin, eps=1e-6), nn.SiLU(), nn.Conv2d(cin, 3, 3, padding=1))

    def forward(self, z):
        return self.out(self.up(self.mid(self.inp(z))))


def vae_decode(device, **kw):
    o = _opts(kw, {"batch": 4, "latent": 64})
    model = _VaeDecoder().eval().to(device, torch.float16)
    z = torch.randn(o["batch"], 4, o["latent"], o["latent"], device=device, dtype=torch.float16)

    @torch.no_grad()
    def step():
        return model(z).float().abs().mean()

    return {"step": step, "meta": _meta(model, o, "SD-shaped VAE decoder, NCHW", "fp16 weights and activations",
                                        "none (inference)")}


# -- DCGAN ----------------------------------------------------------------------

def dcgan_train(device, **kw):
    o = _opts(kw, {"batch": 1024, "nz": 100, "ngf": 64, "ndf": 64})
    nz, g, d = o["nz"], o["ngf"], o["ndf"]

    def up(cin, cout, first=False):
        return [nn.ConvTranspose2d(cin, cout, 4, 1 if first else 2, 0 if first else 1, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(True)]

    def down(cin, cout, bn=True):
        return [nn.Conv2d(cin, cout, 4, 2, 1, bias=False)] + ([nn.BatchNorm2d(cout)] if bn else []) + \
            [nn.LeakyReLU(0.2, True)]

    gen = nn.Sequential(*up(nz, g * 8, True), *up(g * 8, g * 4), *up(g * 4, g * 2), *up(g * 2, g),
                        nn.ConvTranspose2d(g, 3, 4, 2, 1, bias=False), nn.Tanh()).to(device)
    disc = nn.Sequential(*down(3, d, bn=False), *down(d, d * 2), *down(d * 2, d * 4), *down(d * 4, d * 8),
                         nn.Conv2d(d * 8, 1, 4, 1, 0, bias=False)).to(device)
    real = torch.randn(o["batch"], 3, 64, 64, device=device).clamp_(-1, 1)
    noise = torch.randn(o["batch"], nz, 1, 1, device=device)
    ones = torch.ones(o["batch"], device=device)
    zeros = torch.zeros(o["batch"], device=device)
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = F.binary_cross_entropy_with_logits

    def step():
        noise.normal_()
        with torch.autocast(device.type, dtype=torch.bfloat16):
            fake = gen(noise)
            loss_d = bce(disc(real).view(-1).float(), ones) + bce(disc(fake.detach()).view(-1).float(), zeros)
        loss_d.backward()
        opt_d.step()
        opt_d.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            loss_g = bce(disc(fake).view(-1).float(), ones)
        loss_g.backward()
        opt_g.step()
        opt_g.zero_grad(set_to_none=True)
        opt_d.zero_grad(set_to_none=True)
        return (loss_d + loss_g).detach()

    model = nn.ModuleList([gen, disc])
    return {"step": step, "meta": _meta(model, o, "DCGAN (transposed convolutions), NCHW",
                                        "fp32 params, bf16 autocast", "Adam (for-each)")}


# -- Fourier neural operator ------------------------------------------------------

class _Spectral(nn.Module):
    def __init__(self, c, m):
        super().__init__()
        self.m = m
        self.w1 = nn.Parameter(torch.randn(c, c, m, m, dtype=torch.cfloat) / (c * c))
        self.w2 = nn.Parameter(torch.randn(c, c, m, m, dtype=torch.cfloat) / (c * c))

    def forward(self, x):
        b, c, hh, ww = x.shape
        m = self.m
        xf = torch.fft.rfft2(x)
        out = torch.zeros(b, c, hh, ww // 2 + 1, dtype=torch.cfloat, device=x.device)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, :m, :m], self.w1)
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", xf[:, :, -m:, :m], self.w2)
        return torch.fft.irfft2(out, s=(hh, ww))


class _FNO(nn.Module):
    def __init__(self, c, m, layers):
        super().__init__()
        self.lift = nn.Conv2d(3, c, 1)
        self.spec = nn.ModuleList(_Spectral(c, m) for _ in range(layers))
        self.mix = nn.ModuleList(nn.Conv2d(c, c, 1) for _ in range(layers))
        self.proj = nn.Sequential(nn.Conv2d(c, 128, 1), nn.GELU(), nn.Conv2d(128, 1, 1))

    def forward(self, x):
        x = self.lift(x)
        for i, (s, w) in enumerate(zip(self.spec, self.mix)):
            x = s(x) + w(x)
            if i < len(self.spec) - 1:
                x = F.gelu(x)
        return self.proj(x)


def fno_train(device, **kw):
    o = _opts(kw, {"batch": 64, "grid": 128, "width": 64, "modes": 16, "layers": 4})
    model = _FNO(o["width"], o["modes"], o["layers"]).to(device)
    x = torch.randn(o["batch"], 3, o["grid"], o["grid"], device=device)
    y = torch.randn(o["batch"], 1, o["grid"], o["grid"], device=device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    step = _train_step(model, opt, lambda: F.mse_loss(model(x), y), device, amp=False)
    return {"step": step, "meta": _meta(model, o, "2-D Fourier neural operator, NCHW",
                                        "fp32 (cuFFT; cuDNN TF32 by default)", "Adam (for-each)")}
