"""Workloads for traces/capture/capture.py, one builder per class.

Every builder has the signature ``build(device, **options) -> dict`` and
returns ``{"step": callable, "meta": {...}}``: ``step()`` runs one step (one
training iteration, one forward pass, one CUDA-graph replay, a run of decode
tokens) and ``meta`` describes the model for the measurement file. Plain
PyTorch only: random weights and inputs, no downloads. Options arrive as
strings from the command line (``--arg batch=8``) and are converted by the
default's type.

Classes (the names used in validation/ and docs/validation.md):

| builder | class |
| --- | --- |
| cnn_train | CNN training: ResNet-50 (conv + batch norm), channels-last, bf16 autocast, SGD |
| bert_train | encoder training: BERT-base-shaped, post-LN, MLM head, bf16 autocast, AdamW |
| llama_train | decoder training: RMSNorm, SwiGLU, rotary, grouped-query attention |
| compile_train | torch.compile'd decoder training (Triton kernels) |
| cudagraph_infer | decoder forward replayed from one CUDA graph |
| decode_kvcache | greedy generation with a static KV cache (launch-bound) |
| smallbatch_train | small encoder, batch 2: launch-bound training |
| prefill_long | decoder forward over one 32k-token sequence (flash attention) |
| fp32_train | encoder training in fp32; ``tf32=1`` lets the matrix units run tf32 |
| moe_train | decoder training with top-2 mixture-of-experts FFN layers |
| sparse_kernels | one GEMM or elementwise kernel at a time between idle gaps (a spinning host) |
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def _opts(given, defaults):
    """Merge string options into typed defaults; unknown keys are an error."""
    out = dict(defaults)
    for k, v in given.items():
        if k not in defaults:
            raise ValueError(f"unknown option '{k}' (known: {', '.join(sorted(defaults))})")
        d = defaults[k]
        if isinstance(d, bool):
            out[k] = str(v).lower() in ("1", "true", "yes", "on")
        elif isinstance(d, int):
            out[k] = int(v)
        elif isinstance(d, float):
            out[k] = float(v)
        else:
            out[k] = v
    return out


def _autocast(device, enabled=True):
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=enabled)


def _n_params(model):
    return sum(p.numel() for p in model.parameters())


def _adamw(model, device):
    fused = device.type == "cuda"
    return torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused)


# ---------------------------------------------------------------- CNN ----
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * self.expansion
        self.c1 = nn.Conv2d(cin, width, 1, bias=False)
        self.b1 = nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(width)
        self.c3 = nn.Conv2d(width, cout, 1, bias=False)
        self.b3 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, stride=2, padding=1))
        layers, cin = [], 64
        for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
            for i in range(blocks):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = width * Bottleneck.expansion
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def cnn_train(device, **kw):
    o = _opts(kw, {"batch": 128, "image": 224, "channels_last": True})
    model = ResNet50().to(device)
    fmt = torch.channels_last if o["channels_last"] else torch.contiguous_format
    model = model.to(memory_format=fmt)
    x = torch.randn(o["batch"], 3, o["image"], o["image"], device=device).to(memory_format=fmt)
    y = torch.randint(0, 1000, (o["batch"],), device=device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step():
        with _autocast(device):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()  # capture.py checks it is finite (step_result.py)
    return {"step": step, "meta": {"model": "ResNet-50", "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast",
                                   "optimizer": "SGD(momentum 0.9)"}}


# ------------------------------------------------------------ encoder ----
class EncoderLayer(nn.Module):
    """Post-LN transformer encoder layer (BERT), GELU FFN, no mask."""

    def __init__(self, d, heads, ffn):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, ffn)
        self.fc2 = nn.Linear(ffn, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = self.ln1(x + self.o(a.transpose(1, 2).reshape(b, t, d)))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class Encoder(nn.Module):
    def __init__(self, vocab, d, layers, heads, ffn, max_seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_seq, d)
        self.typ = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList(EncoderLayer(d, heads, ffn) for _ in range(layers))
        self.head_fc = nn.Linear(d, d)
        self.head_ln = nn.LayerNorm(d)
        self.decoder = nn.Linear(d, vocab)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.ln(self.tok(idx) + self.pos(pos) + self.typ(torch.zeros_like(idx)))
        for layer in self.layers:
            x = layer(x)
        return self.decoder(self.head_ln(F.gelu(self.head_fc(x))))


def _encoder_train(device, o, amp):
    model = Encoder(o["vocab"], o["d"], o["layers"], o["heads"], o["ffn"], o["seq"]).to(device)
    idx = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    tgt = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    opt = _adamw(model, device)

    def step():
        with _autocast(device, amp):
            logits = model(idx)
            loss = F.cross_entropy(logits.view(-1, o["vocab"]).float(), tgt.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()  # capture.py checks it is finite (step_result.py)
    return step, model


def bert_train(device, **kw):
    o = _opts(kw, {"batch": 32, "seq": 512, "d": 768, "layers": 12, "heads": 12, "ffn": 3072,
                   "vocab": 30522})
    step, model = _encoder_train(device, o, True)
    return {"step": step, "meta": {"model": "BERT-base-shaped encoder (post-LN, MLM head)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)"}}


def smallbatch_train(device, **kw):
    o = _opts(kw, {"batch": 2, "seq": 128, "d": 512, "layers": 6, "heads": 8, "ffn": 2048,
                   "vocab": 8192})
    step, model = _encoder_train(device, o, True)
    return {"step": step, "meta": {"model": "small encoder (post-LN, MLM head)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)"}}


def fp32_train(device, **kw):
    o = _opts(kw, {"batch": 16, "seq": 512, "d": 1024, "layers": 6, "heads": 16, "ffn": 4096,
                   "vocab": 8192, "tf32": False})
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = o["tf32"]
        torch.backends.cudnn.allow_tf32 = o["tf32"]
    step, model = _encoder_train(device, o, False)
    return {"step": step, "meta": {"model": "encoder (post-LN, MLM head)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32, tf32 matmul" if o["tf32"] else "fp32, no tf32",
                                   "optimizer": "AdamW(fused)"}}


# ------------------------------------------------------------ decoder ----
class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


def rope_tables(seq, hd, device, base=10000.0):
    inv = 1.0 / (base ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
    f = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv)
    emb = torch.cat((f, f), dim=-1)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    """x: (b, h, t, hd); cos/sin: (t, hd)."""
    h = x.shape[-1] // 2
    rot = torch.cat((-x[..., h:], x[..., :h]), dim=-1)
    return (x * cos + rot * sin).to(x.dtype)


def repeat_kv(x, rep):
    """(b, kvh, t, hd) -> (b, kvh * rep, t, hd), as Llama's reference code does
    (expand + reshape: no host synchronisation, CUDA-graph safe)."""
    b, h, t, hd = x.shape
    return x[:, :, None].expand(b, h, rep, t, hd).reshape(b, h * rep, t, hd)


class SwiGLU(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class MoE(nn.Module):
    """Top-k softmax-gated mixture of SwiGLU experts; tokens are gathered per
    expert (index_select) and scattered back (index_add_)."""

    def __init__(self, d, hidden, experts, top_k):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(d, hidden) for _ in range(experts))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        probs = F.softmax(self.router(x).float(), dim=-1)
        w, sel = probs.topk(self.top_k, dim=-1)
        w = (w / w.sum(-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(x)
        flat_sel = sel.reshape(-1)
        order = torch.argsort(flat_sel)
        counts = torch.bincount(flat_sel, minlength=len(self.experts)).tolist()  # host sync
        tok = order // self.top_k
        wts = w.reshape(-1)[order]
        start = 0
        for e, n in enumerate(counts):
            if n == 0:
                continue
            idx = tok[start:start + n]
            y = self.experts[e](x.index_select(0, idx)) * wts[start:start + n, None]
            out.index_add_(0, idx, y.to(out.dtype))
            start += n
        return out.reshape(shape)


class DecoderLayer(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn, moe=None):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.n1 = RMSNorm(d)
        self.q = nn.Linear(d, heads * self.hd, bias=False)
        self.kv = nn.Linear(d, 2 * kv_heads * self.hd, bias=False)
        self.o = nn.Linear(heads * self.hd, d, bias=False)
        self.n2 = RMSNorm(d)
        self.ffn = SwiGLU(d, ffn) if moe is None else MoE(d, ffn, *moe)

    def attend(self, x, cos, sin, cache=None, pos=0):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(b, t, 2, self.kv_heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:  # static cache (b, kvh, max_t, hd), positions pos..pos+t-1
            kc, vc = cache
            kc[:, :, pos:pos + t] = k
            vc[:, :, pos:pos + t] = v
            k, v = kc[:, :, :pos + t], vc[:, :, :pos + t]
        rep = self.heads // self.kv_heads
        if rep > 1:  # grouped-query attention: each KV head serves `rep` query heads
            k, v = repeat_kv(k, rep), repeat_kv(v, rep)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None or t > 1)
        return self.o(a.transpose(1, 2).reshape(b, t, -1))

    def forward(self, x, cos, sin, cache=None, pos=0):
        x = x + self.attend(self.n1(x), cos, sin, cache, pos)
        return x + self.ffn(self.n2(x))


class Llama(nn.Module):
    def __init__(self, vocab, d, layers, heads, kv_heads, ffn, max_seq, moe=None):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(DecoderLayer(d, heads, kv_heads, ffn, moe)
                                    for _ in range(layers))
        self.norm = RMSNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        cos, sin = rope_tables(max_seq, d // heads, self.emb.weight.device)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, idx, caches=None, pos=0, last_only=False):
        t = idx.shape[1]
        cos = self.cos[pos:pos + t].to(self.emb.weight.dtype)
        sin = self.sin[pos:pos + t].to(self.emb.weight.dtype)
        x = self.emb(idx)
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, None if caches is None else caches[i], pos)
        if last_only:
            x = x[:, -1:]
        return self.head(self.norm(x))


LLAMA_1B = {"d": 2048, "layers": 16, "heads": 32, "kv_heads": 8, "ffn": 5632, "vocab": 32000}


def _llama(device, o, moe=None, max_seq=None):
    with torch.device(device):
        return Llama(o["vocab"], o["d"], o["layers"], o["heads"], o["kv_heads"], o["ffn"],
                     max_seq or o["seq"], moe)


def _decoder_train(device, o, model, compiled=None):
    idx = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    tgt = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    opt = _adamw(model, device)
    fwd = model if compiled is None else compiled

    def step():
        with _autocast(device):
            logits = fwd(idx)
            loss = F.cross_entropy(logits.view(-1, o["vocab"]).float(), tgt.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()  # capture.py checks it is finite (step_result.py)
    return step


def llama_train(device, **kw):
    o = _opts(kw, {**LLAMA_1B, "batch": 2, "seq": 2048})
    model = _llama(device, o)
    return {"step": _decoder_train(device, o, model),
            "meta": {"model": "Llama-shaped decoder (RMSNorm, SwiGLU, rotary, GQA)",
                     "n_params": _n_params(model), **o,
                     "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)"}}


def moe_train(device, **kw):
    o = _opts(kw, {"d": 1024, "layers": 4, "heads": 16, "kv_heads": 4, "ffn": 2816,
                   "vocab": 32000, "experts": 8, "top_k": 2, "batch": 8, "seq": 1024})
    model = _llama(device, o, moe=(o["experts"], o["top_k"]))
    return {"step": _decoder_train(device, o, model),
            "meta": {"model": "decoder with top-k MoE SwiGLU FFN (tokens gathered per expert)",
                     "n_params": _n_params(model), **o,
                     "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)"}}


def compile_train(device, **kw):
    o = _opts(kw, {"d": 1024, "layers": 8, "heads": 16, "kv_heads": 4, "ffn": 2816,
                   "vocab": 32000, "batch": 8, "seq": 1024, "mode": "default"})
    model = _llama(device, o)
    compiled = torch.compile(model, mode=None if o["mode"] == "default" else o["mode"])
    return {"step": _decoder_train(device, o, model, compiled),
            "meta": {"model": "Llama-shaped decoder under torch.compile (Inductor/Triton)",
                     "n_params": _n_params(model), **o,
                     "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)"}}


def _bf16_llama(device, o, max_seq):
    model = _llama(device, o, max_seq=max_seq).to(torch.bfloat16).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def prefill_long(device, **kw):
    o = _opts(kw, {**LLAMA_1B, "batch": 1, "seq": 32768})
    model = _bf16_llama(device, o, o["seq"])
    idx = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)

    @torch.inference_mode()
    def step():
        return model(idx, last_only=True)
    return {"step": step, "meta": {"model": "Llama-shaped decoder, prefill to last-token logits",
                                   "n_params": _n_params(model), **o, "dtype": "bf16 weights"}}


def cudagraph_infer(device, **kw):
    o = _opts(kw, {**LLAMA_1B, "layers": 12, "batch": 2, "seq": 256})
    model = _bf16_llama(device, o, o["seq"])
    idx = torch.randint(0, o["vocab"], (o["batch"], o["seq"]), device=device)
    if device.type != "cuda":  # smoke test: eager
        @torch.inference_mode()
        def eager():
            return model(idx)
        return {"step": eager, "meta": {"model": "eager (no CUDA graph on CPU)", **o}}
    with torch.inference_mode():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(idx)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = model(idx)
    holder = {"out": out}  # keep the graph's output alive

    def step():
        graph.replay()
    step.holder = holder
    return {"step": step, "meta": {"model": "Llama-shaped decoder forward, one CUDA graph replay",
                                   "n_params": _n_params(model), **o, "dtype": "bf16 weights"}}


def decode_kvcache(device, **kw):
    o = _opts(kw, {**LLAMA_1B, "layers": 12, "batch": 1, "prompt": 512, "tokens": 16})
    max_t = o["prompt"] + o["tokens"]
    model = _bf16_llama(device, o, max_t)
    hd = o["d"] // o["heads"]
    prompt = torch.randint(0, o["vocab"], (o["batch"], o["prompt"]), device=device)
    with torch.inference_mode():
        shape = (o["batch"], o["kv_heads"], max_t, hd)
        caches = [(torch.zeros(shape, device=device, dtype=torch.bfloat16),
                   torch.zeros(shape, device=device, dtype=torch.bfloat16))
                  for _ in range(o["layers"])]
        first = model(prompt, caches, 0, last_only=True).argmax(-1)

    @torch.inference_mode()
    def step():
        tok = first
        for i in range(o["tokens"]):
            tok = model(tok, caches, o["prompt"] + i).argmax(-1)
        return tok
    return {"step": step, "meta": {"model": "Llama-shaped decoder, greedy decode with a static KV cache",
                                   "n_params": _n_params(model), **o, "dtype": "bf16 weights",
                                   "step": f"{o['tokens']} tokens after a {o['prompt']}-token prompt"}}


def gpt3_train(device, **kw):
    """GPT-3-family training, the model of capture_gpt3.py (its presets)."""
    import capture_gpt3 as g
    o = _opts(kw, {"preset": "medium", "batch": 1, "seq": 512, "mode": "train"})
    cfg = g.PRESETS[o["preset"]]
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    with torch.device(device):
        model = g.GPT(cfg)
    step, _ = g.make_step(model, o["mode"], o["batch"], o["seq"], cfg.vocab, gen)
    return {"step": step, "meta": {"model": f"GPT-3 {o['preset']} (capture_gpt3.py)",
                                   "n_params": _n_params(model), **o,
                                   "dtype": "fp32 params, bf16 autocast"}}


def sparse_kernels(device, **kw):
    """One operation launched ``count`` times per step, each launch
    ``period_us`` after the previous one (the host spins between them; 0: back
    to back): short kernels between idle gaps, as in launch-bound steps, with
    a host that is busy but not in PyTorch operators. ``op=gemm``: a bf16
    ``m x k`` by ``k x n`` product; ``op=mul``: ``x.mul_()`` over ``mb`` MB of
    fp32."""
    import time
    o = _opts(kw, {"op": "gemm", "m": 512, "n": 1024, "k": 1024, "mb": 8, "period_us": 0.0,
                   "count": 200})
    if o["op"] == "gemm":
        a = torch.randn(o["m"], o["k"], device=device, dtype=torch.bfloat16)
        b = torch.randn(o["k"], o["n"], device=device, dtype=torch.bfloat16)
        c = torch.empty(o["m"], o["n"], device=device, dtype=torch.bfloat16)

        def once():
            torch.mm(a, b, out=c)
    elif o["op"] == "mul":
        x = torch.randn(o["mb"] * 256 * 1024, device=device)

        def once():
            x.mul_(1.0001)
    else:
        raise ValueError(f"op={o['op']}: expected gemm or mul")
    period = o["period_us"] * 1e-6

    def step():
        t = time.perf_counter()
        for _ in range(o["count"]):
            once()
            if period > 0:
                t += period
                while time.perf_counter() < t:
                    pass
    return {"step": step, "meta": {"model": f"sparse {o['op']}", **o, "dtype": "bf16 (gemm), fp32 (mul)"}}


BUILDERS = {f.__name__: f for f in (cnn_train, bert_train, llama_train, compile_train,
                                     cudagraph_infer, decode_kvcache, smallbatch_train,
                                     prefill_long, fp32_train, moe_train, gpt3_train,
                                     sparse_kernels)}
