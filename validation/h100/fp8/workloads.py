"""FP8 workloads (docs/validation.md, "FP8 tensor-core GEMMs"): written on
2026-12-05 to check the model on 8-bit tensor-core matrix products, which no
capture before had. Passed to ``traces/capture/capture.py`` as
``FILE.py:FUNC``; plain PyTorch (``torch._scaled_mm``, per-tensor scales
computed each step from the activations' absolute maximum, as dynamic FP8
inference does), random weights and inputs. Helpers from
``../../h200/heldout/workloads.py``.

| builder | what |
| --- | --- |
| ffn_fp8_infer | a stack of `layers` transformer feed-forward blocks (d -> 4d -> d, GELU, residual, layer norm) on `tokens` x `d` bf16 activations; both matrix products per block in FP8 (e4m3 operands, bf16 output) with per-tensor dynamic activation scales; inference |
| ffn_bf16_infer | the same blocks with bf16 matrix products (F.linear): the FP8 step's twin |
"""
import importlib.util
import os

import torch
import torch.nn.functional as F

_spec = importlib.util.spec_from_file_location(
    "_heldout1", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "h200", "heldout", "workloads.py"))
_h1 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_h1)
_opts = _h1._opts

E4M3_MAX = 448.0


def _weights(device, o):
    torch.manual_seed(0)
    d, h = o["d"], 4 * o["d"]
    return [(torch.randn(h, d, device=device, dtype=torch.bfloat16) * d ** -0.5,
             torch.randn(d, h, device=device, dtype=torch.bfloat16) * h ** -0.5) for _ in range(o["layers"])]


def _meta(o, what, dtype):
    d = o["d"]
    return {"model": what, "n_params": o["layers"] * 8 * d * d, **o, "dtype": dtype, "optimizer": "none"}


def ffn_fp8_infer(device, **kw):
    o = _opts(kw, {"tokens": 8192, "d": 4096, "layers": 8})
    e4m3 = torch.float8_e4m3fn

    def quant(t):
        """Per-tensor scale from the absolute maximum; `t` / scale in e4m3."""
        scale = (t.abs().amax().float() / E4M3_MAX).clamp(min=1e-12)
        return (t / scale).to(e4m3), scale

    # Weights quantised once; _scaled_mm wants its second operand column-major.
    layers = []
    for w1, w2 in _weights(device, o):
        (q1, s1), (q2, s2) = quant(w1), quant(w2)
        layers.append((q1.t(), s1, q2.t(), s2))
    x0 = torch.randn(o["tokens"], o["d"], device=device, dtype=torch.bfloat16)

    def step():
        with torch.inference_mode():
            x = x0
            for q1t, s1, q2t, s2 in layers:
                xq, sx = quant(x)
                hdn = torch._scaled_mm(xq, q1t, scale_a=sx, scale_b=s1, out_dtype=torch.bfloat16)
                hq, sh = quant(F.gelu(hdn))
                y = torch._scaled_mm(hq, q2t, scale_a=sh, scale_b=s2, out_dtype=torch.bfloat16)
                x = F.layer_norm(x + y, (o["d"],))
    return {"step": step, "meta": _meta(o, "FFN stack, FP8 (e4m3) matrix products, dynamic scales", "fp8 e4m3 GEMMs, bf16 activations")}


def ffn_bf16_infer(device, **kw):
    o = _opts(kw, {"tokens": 8192, "d": 4096, "layers": 8})
    layers = _weights(device, o)
    x0 = torch.randn(o["tokens"], o["d"], device=device, dtype=torch.bfloat16)

    def step():
        with torch.inference_mode():
            x = x0
            for w1, w2 in layers:
                y = F.linear(F.gelu(F.linear(x, w1)), w2)
                x = F.layer_norm(x + y, (o["d"],))
    return {"step": step, "meta": _meta(o, "FFN stack, bf16 matrix products (the FP8 step's twin)", "bf16")}
