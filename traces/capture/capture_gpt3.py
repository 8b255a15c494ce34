#!/usr/bin/env python3
"""Capture a GPT-3-family kernel trace and measure its energy with NVML.

Builds a GPT-3-shaped decoder (random weights, no data download), runs
training or inference steps under bf16 autocast at the clocks the firmware
chooses, and writes into --out:

  <tag>.measured.json      NVML facts and the energy of a steady window of
                           --steps steps, measured WITHOUT the profiler
  <tag>.kineto.json.gz     torch.profiler Chrome trace (CPU + CUDA,
                           record_shapes) of --profile-steps further steps,
                           each inside a ``ProfilerStep#<i>`` range
  <tag>.nvml_samples.csv   every NVML sample of the run (~5 ms period)

NVML is used read-only: nothing about the GPU's clocks or limits is changed.

Energy: the NVML energy counter refreshes about every 100 ms. CUDA events
mark every step boundary and are mapped to host time; the counter is
interpolated linearly between its ticks at the first and last boundary of the
window, which is surrounded by >= 0.35 s of identical steps on both sides so
that the interpolation only ever spans steady running. A tick-to-tick
estimate (no interpolation, fractional step count) is kept as a cross-check.

Example:
  python3 capture_gpt3.py --preset xl --batch 4 --seq 2048 --mode train \
      --steps 40 --warmup 5 --out out/
"""
import argparse
import gzip
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, asdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kineto_steps as steps_lib  # noqa: E402
import nvml_readonly as nr  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VOCAB = 50304  # GPT-2/3 vocabulary padded to a multiple of 64


@dataclass
class GPTConfig:
    n_layer: int
    d_model: int
    n_head: int
    vocab: int = VOCAB
    max_seq: int = 2048


PRESETS = {
    "medium": GPTConfig(n_layer=24, d_model=1024, n_head=16),   # GPT-3 Medium, 350M
    "xl": GPTConfig(n_layer=24, d_model=2048, n_head=16),       # GPT-3 XL, 1.3B
    "2.7b": GPTConfig(n_layer=32, d_model=2560, n_head=32),     # GPT-3 2.7B
}


class SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_head, d // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, 4 * cfg.d_model)
        self.proj = nn.Linear(4 * cfg.d_model, cfg.d_model)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm transformer block, dense attention (GPT-3 style)."""

    def __init__(self, cfg):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Token + learned position embeddings, n_layer blocks, final LN, an
    untied output projection (as in the shipped H200 trace)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab, cfg.d_model)
        self.wpe = nn.Embedding(cfg.max_seq, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def make_step(model, mode, batch, seq, vocab, gen):
    idx = torch.randint(0, vocab, (batch, seq), device="cuda", generator=gen)
    tgt = torch.randint(0, vocab, (batch, seq), device="cuda", generator=gen)
    if mode == "infer":
        model.eval()

        @torch.inference_mode()
        def step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                return model(idx)
        return step, None

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx)
            loss = F.cross_entropy(logits.view(-1, vocab), tgt.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()  # capture.py checks it is finite (step_result.py)
    return step, opt


def warmup_step_time(step, n):
    """Run n untimed steps; the mean GPU time of the last half of them (s)."""
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    ev[0].record()
    for i in range(n):
        step()
        ev[i + 1].record()
    torch.cuda.synchronize()
    tail = max(1, n // 2)
    return ev[-1 - tail].elapsed_time(ev[-1]) / 1e3 / tail


def measure_window(step, n_steps, sampler, step_est):
    """Run guard + n_steps + guard steps back to back, boundaries marked by
    CUDA events; return boundary host times and the window indices."""
    guard = max(2, math.ceil(0.35 / max(step_est, 1e-4)))
    total = 2 * guard + n_steps
    torch.cuda.synchronize()
    anchor = torch.cuda.Event(enable_timing=True)
    anchor.record()
    h0 = time.perf_counter()
    anchor.synchronize()
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(total + 1)]
    sampler.phase = "measure"
    w0 = time.perf_counter()
    marks[0].record()
    for i in range(total):
        step()
        marks[i + 1].record()
    torch.cuda.synchronize()
    w1 = time.perf_counter()
    sampler.phase = "post_measure"
    bounds = [h0 + anchor.elapsed_time(m) / 1e3 for m in marks]
    return bounds, guard, (w0, w1)


def main():
    ap = argparse.ArgumentParser(description="GPT-3 family trace capture + NVML energy (read-only)")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="xl")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--mode", choices=("train", "infer"), default="train")
    ap.add_argument("--steps", type=int, default=40, help="steps in the measured window")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile-steps", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="")
    ap.add_argument("--sample-ms", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tag = args.tag or f"gpt3{args.preset.replace('.', '')}_{args.mode}_b{args.batch}_t{args.seq}"
    os.makedirs(args.out, exist_ok=True)
    cfg = PRESETS[args.preset]
    if args.seq > cfg.max_seq:
        cfg = GPTConfig(**{**asdict(cfg), "max_seq": args.seq})

    gpu = nr.Gpu(0)
    info = gpu.device_info()
    sampler = nr.Sampler(gpu, args.sample_ms / 1e3)
    sampler.start()
    t_start = time.perf_counter()

    sampler.phase = "build"
    torch.manual_seed(args.seed)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    with torch.device("cuda"):
        model = GPT(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    step, _ = make_step(model, args.mode, args.batch, args.seq, cfg.vocab, gen)

    sampler.phase = "warmup"
    step_est = warmup_step_time(step, args.warmup)
    print(f"{tag}: {n_params/1e6:.1f} M params, warm-up step ~{step_est*1e3:.1f} ms", flush=True)

    bounds, guard, (w0, w1) = measure_window(step, args.steps, sampler, step_est)
    time.sleep(0.25)                       # let the counter tick past the last step
    rows = sampler.snapshot()
    i0, i1 = guard, guard + args.steps
    fields = nr.window_fields(rows, bounds, i0, i1)
    step_times = [bounds[i + 1] - bounds[i] for i in range(i0, i1)]

    sampler.phase = "profile"
    fd, raw = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    steps_lib.profile_steps(step, args.profile_steps, raw)
    sampler.phase = "export"
    stats = steps_lib.trace_stats(raw)
    kpath = os.path.join(args.out, f"{tag}.kineto.json.gz")
    with open(raw, "rb") as f, gzip.open(kpath, "wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g)
    os.unlink(raw)
    sampler.phase = "end"
    time.sleep(0.02)
    sampler.stop()

    measured = {
        "name": info["name"], "driver": info["driver"],
        "power_limit_mW": info["power_limit_mW"],
        "power_limit_constraints_mW": info["power_limit_constraints_mW"],
        "mem_clocks": info["mem_clocks"], "graphics_clocks": info["graphics_clocks"],
        "max_clock_sm": info["max_clock_sm"], "max_clock_mem": info["max_clock_mem"],
        "app_clock_sm": info["app_clock_sm"], "default_app_clock_sm": info["default_app_clock_sm"],
        **fields,
        "step_time_s_min_max": [min(step_times), max(step_times)],
        "guard_steps_each_side": guard,
        "warmup_steps": args.warmup,
        "host_wall_s_all_measured_steps": w1 - w0,
        "preset": args.preset, "batch": args.batch, "seq": args.seq, "mode": args.mode,
        "model": {**asdict(cfg), "n_params": n_params, "tied_embeddings": False,
                  "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)" if args.mode == "train" else None},
        "peak_mem_GB": torch.cuda.max_memory_allocated() / 1e9,
        "profile": {"profiled_steps": args.profile_steps, "profiler_warmup_steps": 1, **stats,
                    "note": "profiled after the energy window; the GPU is drained before the "
                            "first traced step, and the last traced step ends with "
                            "torch.cuda.synchronize()"},
        "clock_sync": {"unix_minus_perf_counter_s": time.time() - time.perf_counter(),
                       "note": "kineto ts (us) + baseTimeNanoseconds/1e3 is unix time in us"},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version()},
        "sampler": {"period_s": args.sample_ms / 1e3, "rows": len(sampler.rows),
                    "errors": sampler.errors},
        "date_utc": time.strftime("%Y-%m-%d", time.gmtime()),
        "tool": "traces/capture/capture_gpt3.py",
    }
    with open(os.path.join(args.out, f"{tag}.measured.json"), "w") as f:
        json.dump(measured, f, indent=1)
    with open(os.path.join(args.out, f"{tag}.nvml_samples.csv"), "w") as f:
        nr.write_samples_csv(sampler.rows, f)

    ks = [s["kernels"] for s in stats["steps"]]
    cross = measured["tick_crosscheck"]
    print(f"{tag}: {args.steps} steps  {measured['time_per_step_s']*1e3:.2f} ms/step  "
          f"{measured['energy_per_step_j']:.2f} J/step  {measured['mean_power_w']:.1f} W  "
          f"SM {measured['mean_sm_mhz']:.0f} MHz  reasons {hex(measured['clock_event_reasons_mask'])}  "
          f"kernels/step {ks}  trace {os.path.getsize(kpath)/1e6:.2f} MB  "
          f"(tick check {cross['energy_per_step_j'] if cross else float('nan'):.2f} J/step; "
          f"halves {[round(s['energy_mJ']/1e3/s['steps'], 2) for s in measured['sub_windows']]}; "
          f"total {time.perf_counter() - t_start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
