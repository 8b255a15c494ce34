#!/usr/bin/env python3
"""Calibration microbenchmarks for dvfsim's power and latency models (H200).

Runs a fixed list of PyTorch microbenchmarks spanning the GPU's power range at
the clocks the firmware chooses (nothing is locked; NVML is used read-only),
and writes, into --out:

  measurements.csv   one row per benchmark, the schema `dvfsim calibrate` reads
  samples.csv.gz     every NVML sample of the run (~10 ms period)
  device_info.json   read-only NVML snapshot + PyTorch device properties
  bench_details.json per-benchmark extras (kernel names, rates, uncertainties)

Method (see README.md beside this file for the formulas):
- A sampler thread polls NVML every ~10 ms: energy counter, instantaneous and
  averaged power, SM and memory clock, clock-event reasons, temperature.
- Each benchmark issues its operation back to back for warm-up + window +
  tail seconds. A pair of CUDA events brackets every chunk of operations
  (chunks of ~2 ms); all events are mapped to host perf_counter time through
  an anchor event recorded on an idle GPU.
- The energy window runs from the first energy-counter tick at least
  `warmup` seconds after the GPU started the benchmark to the last tick at
  least 0.15 s before it finished. Energy is the counter difference between
  those ticks; the window is the time between them.
- busy_s is the union of the event-bracketed chunk intervals inside the
  window; FLOPs, bytes and launches are the per-operation counts times the
  number of operations inside the window (fractional at the window edges).
- Kernels per operation are counted at the end with torch.profiler, one
  operation per benchmark, after all energy windows.

Deep idle is measured before PyTorch creates a CUDA context.
"""
import argparse
import collections
import csv
import gzip
import json
import math
import os
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "traces", "capture"))
import nvml_readonly as nr  # noqa: E402

CSV_COLUMNS = ["name", "class", "core_mhz", "core_mhz_p10", "core_mhz_p90", "memory_mhz",
               "window_s", "busy_s", "energy_j", "mean_power_w", "flops", "dram_bytes",
               "launches", "reasons_mask", "source"]

MB = 1 << 20
GB = 1 << 30


class Bench:
    """One microbenchmark. `make()` allocates data and returns fn(i) that
    issues one operation (i is the running operation index)."""

    def __init__(self, name, cls, make=None, flops=0, bytes_=0, kind="loop", chunk=None,
                 duty=None, note=""):
        self.name, self.cls, self.make = name, cls, make
        self.flops, self.bytes = flops, bytes_
        self.kind = kind          # loop | idle | duty
        self.chunk = chunk        # operations per event pair (None: ~CHUNK_S worth)
        self.duty = duty          # (period_s, on_s) for kind == duty
        self.note = note
        self.busy_from_profile = False


def bit_toggle_density(torch, t):
    """Mean over the 32 bit lanes of a word of 2 p (1 - p), p the share of
    ones in that lane over the words of tensor `t`: how often a lane flips
    between two independent words of these data (random bits: 0.5, constant
    data: 0)."""
    w = t.reshape(-1).view(torch.int32)[: 1 << 24]
    p = torch.stack([((w >> k) & 1).float().mean() for k in range(32)])
    return float((2 * p * (1 - p)).mean())


def build_benches(torch, F, args):
    bf16, fp32 = torch.bfloat16, torch.float32
    SHORT = {bf16: "bf16", fp32: "fp32"}
    dev = "cuda"
    g = torch.Generator(device=dev)
    g.manual_seed(1234)

    def randn(*shape, dtype=fp32):
        return torch.randn(*shape, device=dev, dtype=dtype, generator=g)

    def data(*shape, dtype=fp32, how="random"):
        """random (the default everywhere), or zeros / ones for the
        data-dependence benchmarks of the `extra` suite."""
        if how == "zeros":
            return torch.zeros(*shape, device=dev, dtype=dtype)
        if how == "ones":
            return torch.ones(*shape, device=dev, dtype=dtype)
        return randn(*shape, dtype=dtype)
    suffix = {"random": "", "zeros": "_zeros", "ones": "_ones"}

    benches = [Bench("idle_ctx", "idle", kind="idle",
                     note="CUDA context created, no kernel ever launched")]

    # ---- device-to-device copies; rotate buffers so no source sits in L2 ---
    def copy_bench(size, how="random"):
        n_pairs = max(1, min(8, (1 * GB) // size))
        def make():
            src = [data(size // 4, how=how) for _ in range(n_pairs)]
            dst = [torch.empty_like(s) for s in src]
            def fn(i):
                j = i % n_pairs
                dst[j].copy_(src[j])
            return fn
        label = f"{size // GB}GB" if size >= GB else f"{size // MB}MB"
        return Bench(f"copy_{label}{suffix[how]}", "memcpy", make, 0, 2 * size,
                     note=f"dst.copy_(src), fp32 {how}, {n_pairs} rotating pairs")
    benches += [copy_bench(64 * MB), copy_bench(512 * MB), copy_bench(4 * GB)]

    # ---- elementwise ---------------------------------------------------------
    N = 1 << 28  # 268M elements: 512 MiB in bf16, 1 GiB in fp32
    def axpy(dtype):
        es = torch.tensor([], dtype=dtype).element_size()
        def make():
            x, y = randn(N, dtype=dtype), randn(N, dtype=dtype)
            z = torch.empty_like(x)
            def fn(i):
                torch.add(y, x, alpha=0.5, out=z)
            return fn
        return Bench(f"ew_axpy_{SHORT[dtype]}", "elementwise", make, 2 * N, 3 * N * es,
                     note="z = y + 0.5*x (one kernel), N = 2^28")
    def gelu(dtype):
        es = torch.tensor([], dtype=dtype).element_size()
        def make():
            x = randn(N, dtype=dtype)
            def fn(i):
                F.gelu(x)
            return fn
        return Bench(f"ew_gelu_{SHORT[dtype]}", "elementwise", make, 8 * N, 2 * N * es,
                     note="F.gelu (erf form), N = 2^28; 8 FLOP/element nominal")
    benches += [axpy(bf16), axpy(fp32), gelu(bf16), gelu(fp32)]

    # ---- reductions ----------------------------------------------------------
    def rsum(dtype):
        es = torch.tensor([], dtype=dtype).element_size()
        def make():
            x = randn(N, dtype=dtype)
            def fn(i):
                torch.sum(x)
            return fn
        return Bench(f"reduce_sum_{SHORT[dtype]}", "reduction", make, N, N * es,
                     note="torch.sum over all N = 2^28 elements")
    benches += [rsum(bf16), rsum(fp32)]

    # ---- layer norm ----------------------------------------------------------
    rows_, d = 131072, 2048
    def make_ln():
        x = randn(rows_, d, dtype=bf16)
        w, b = randn(d, dtype=bf16), randn(d, dtype=bf16)
        def fn(i):
            F.layer_norm(x, (d,), w, b)
        return fn
    benches.append(Bench("layernorm_bf16", "norm", make_ln, 8 * rows_ * d,
                         2 * rows_ * d * 2 + 2 * d * 2 + 2 * rows_ * 4,
                         note="F.layer_norm over (131072, 2048) bf16, affine"))

    # ---- attention -----------------------------------------------------------
    B, H, Tq, D = 4, 16, 2048, 128
    attn_fwd_flops = 4 * B * H * Tq * Tq * D // 2          # causal: half of QK^T and PV
    bhtd = B * H * Tq * D
    attn_fwd_bytes = 4 * bhtd * 2 + B * H * Tq * 4          # q,k,v read, o write, lse write
    attn_bwd_bytes = 8 * bhtd * 2 + B * H * Tq * 4          # q,k,v,o,do read; dq,dk,dv write; lse
    n_sets = 4
    def make_attn(bwd):
        def make():
            sets = []
            for _ in range(n_sets):
                q, k, v = (randn(B, H, Tq, D, dtype=bf16).requires_grad_(bwd) for _ in range(3))
                sets.append((q, k, v, randn(B, H, Tq, D, dtype=bf16)))
            def fn(i):
                q, k, v, do = sets[i % n_sets]
                if bwd:
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    torch.autograd.grad(o, (q, k, v), do)
                else:
                    with torch.no_grad():
                        F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return fn
        return make
    benches.append(Bench("attn_fwd_bf16", "attention", make_attn(False), attn_fwd_flops,
                         attn_fwd_bytes, note="SDPA causal B4 H16 T2048 D128, 4 rotating sets"))
    benches.append(Bench("attn_fwdbwd_bf16", "attention", make_attn(True),
                         attn_fwd_flops * 7 // 2, attn_fwd_bytes + attn_bwd_bytes,
                         note="SDPA fwd + autograd.grad; bwd FLOPs = 2.5x fwd"))

    # ---- GEMMs ---------------------------------------------------------------
    def gemm_make(M, N_, K, how="random"):
        per_set = 2 * (M * K + K * N_ + M * N_)
        sets_n = max(2, min(8, math.ceil(GB / per_set)))
        def make():
            sets = [(data(M, K, dtype=bf16, how=how), data(K, N_, dtype=bf16, how=how),
                     torch.empty(M, N_, device=dev, dtype=bf16)) for _ in range(sets_n)]
            def fn(i):
                a, b, c = sets[i % sets_n]
                torch.matmul(a, b, out=c)
            return fn
        return make, per_set, sets_n
    for (M, N_, K) in [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 8192, 2048),
                       (8192, 8192, 256)]:
        make, per_set, sets_n = gemm_make(M, N_, K)
        benches.append(Bench(f"gemm_bf16_m{M}_n{N_}_k{K}", "gemm", make, 2 * M * N_ * K,
                             per_set, note=f"torch.matmul(A[M,K], B[K,N], out=C), {sets_n} rotating sets"))

    # ---- duty-cycled GEMM (firmware response) ---------------------------------
    make, per_set, sets_n = gemm_make(8192, 8192, 8192)
    def duty(period, on):
        pct = round(100 * on / period)
        tag = "" if abs(period - 0.1) < 1e-9 else f"_p{round(period * 1e3)}"
        return Bench(f"gemm_duty{pct}{tag}", "mixed", make, 2 * 8192 ** 3, per_set,
                     kind="duty", duty=(period, on),
                     note=f"8192^3 bf16 GEMMs for {on*1e3:.1f} ms then idle, period {period*1e3:.0f} ms")
    benches += [duty(0.100, 0.050), duty(0.100, 0.025)]

    # ---- launch-bound tiny kernels --------------------------------------------
    n_tiny = 1 << 18
    def make_tiny():
        x = randn(n_tiny)
        def fn(i):
            torch.mul(x, 1.0000001, out=x)
        return fn
    tiny = Bench("ew_tiny_launchbound", "elementwise", make_tiny, n_tiny, 2 * n_tiny * 4,
                 chunk=1, note="in-place mul on 1 MiB fp32 (L2-resident; bytes nominal); "
                               "busy_s = profiled kernel time per op x ops in window")
    tiny.busy_from_profile = True
    benches.append(tiny)

    benches.append(Bench("idle_ctx_post", "idle", kind="idle",
                         note="context idle right after the benchmarks (hot GPU)"))
    if args.suite == "extra":
        # repeatability on a second boot, data dependence (zeros / ones vs
        # random), duty cycles whose period does not alias with NVML's
        # 100 ms refresh, and the launch-bound case with profiled busy time
        mk8, per8, sets8 = gemm_make(8192, 8192, 8192, how="zeros")
        benches = [benches[0],
                   copy_bench(4 * GB), copy_bench(4 * GB, "zeros"), copy_bench(4 * GB, "ones"),
                   next(b for b in benches if b.name == "gemm_bf16_m8192_n8192_k8192"),
                   Bench("gemm_bf16_m8192_n8192_k8192_zeros", "gemm", mk8, 2 * 8192 ** 3, per8,
                         note="as gemm_bf16_m8192_n8192_k8192 but A = B = 0"),
                   duty(0.137, 0.0685), duty(0.137, 0.03425),
                   tiny, benches[-1]]
    if args.suite == "occupancy":
        benches = occupancy_benches(torch, args) + [benches[-1]]
    if args.suite == "burst":
        # bf16 GEMMs in short bursts at a low duty, so that the board's
        # average stays far below its 700 W limit and the firmware keeps
        # 1980 MHz: tensor power at the top clock, which every calibration
        # row above ran capped below (docs/calibration.md)
        def burst(shape, period, on):
            M, N_, K = shape
            mk, per, _ = gemm_make(M, N_, K)
            pct = round(100 * on / period)
            return Bench(f"gemm_m{M}_n{N_}_k{K}_duty{pct}_p{round(period * 1e3)}", "mixed", mk,
                         2 * M * N_ * K, per, kind="duty", duty=(period, on),
                         note=f"{M}x{N_}x{K} bf16 GEMMs for {on*1e3:.1f} ms then idle, "
                              f"period {period*1e3:.0f} ms")
        benches = [benches[0],
                   burst((8192, 8192, 8192), 0.100, 0.010), burst((8192, 8192, 8192), 0.100, 0.020),
                   burst((8192, 8192, 8192), 0.050, 0.005), burst((4096, 4096, 4096), 0.100, 0.010),
                   burst((2048, 8192, 2048), 0.100, 0.010), burst((8192, 8192, 256), 0.100, 0.010),
                   benches[-1]]
    if args.suite == "data":
        # what the operands hold, on tensor-core work at the power limit
        # (docs/calibration.md, "Operand data"): the same 8192^3 GEMM in fp16
        # instead of bf16, with A (or A and B) the output of a ReLU (half of
        # its elements zero, as every layer of a ReLU network reads in both
        # passes), with B at the scale of initialised weights; and a VGG-sized
        # 3x3 convolution on random and on ReLU input.
        def operands(M, N_, K, a_how, b_how, dtype):
            def one(shape, how):
                x = randn(*shape, dtype=dtype)
                if how == "relu":
                    return torch.relu(x)
                if how == "w002":
                    return x * 0.02
                return x
            def make():
                sets = [(one((M, K), a_how), one((K, N_), b_how),
                         torch.empty(M, N_, device=dev, dtype=dtype)) for _ in range(2)]
                def fn(i):
                    a, b, c = sets[i % 2]
                    torch.matmul(a, b, out=c)
                return fn
            return make
        n8 = 8192
        def gemm_row(tag, a_how, b_how, dtype, what):
            return Bench(f"gemm_{tag}_m{n8}_n{n8}_k{n8}" + ("" if a_how == b_how == "random" else
                                                           f"_{a_how}_{b_how}"),
                         "gemm", operands(n8, n8, n8, a_how, b_how, dtype), 2 * n8 ** 3,
                         2 * 3 * n8 * n8, note=what)
        Nb, C, HW = 64, 256, 56
        def conv_make(relu_in):
            def make():
                w = randn(C, C, 3, 3, dtype=bf16).mul_(0.03).to(memory_format=torch.channels_last)
                xs = [randn(Nb, C, HW, HW, dtype=bf16).to(memory_format=torch.channels_last)
                      for _ in range(2)]
                if relu_in:
                    xs = [torch.relu(x) for x in xs]
                def fn(i):
                    F.conv2d(xs[i % 2], w, padding=1)
                return fn
            return make
        conv_flops = 2 * Nb * HW * HW * C * C * 9
        conv_bytes = 2 * (2 * Nb * C * HW * HW + C * C * 9)
        benches = [benches[0],
                   gemm_row("bf16", "random", "random", bf16, "as the calib row: A, B ~ N(0, 1)"),
                   gemm_row("fp16", "random", "random", torch.float16, "A, B ~ N(0, 1) in fp16"),
                   gemm_row("bf16", "relu", "random", bf16, "A = relu(N(0, 1)): half zeros"),
                   gemm_row("bf16", "relu", "relu", bf16, "A and B = relu(N(0, 1))"),
                   gemm_row("bf16", "random", "w002", bf16, "B ~ N(0, 0.02^2), weights' scale"),
                   Bench("conv3x3_bf16_n64_c256_56", "conv", conv_make(False), conv_flops, conv_bytes,
                         note="F.conv2d 64x256x56x56 by 256x256x3x3, pad 1, channels-last, x ~ N(0, 1)"),
                   Bench("conv3x3_bf16_n64_c256_56_relu", "conv", conv_make(True), conv_flops,
                         conv_bytes, note="as conv3x3_bf16_n64_c256_56 on x = relu(N(0, 1))"),
                   benches[-1]]
    if args.suite == "fp8":
        # FP8 (e4m3) tensor-core GEMMs through torch._scaled_mm (per-tensor
        # scales of 1, bf16 output) against the same shapes in bf16
        # (docs/calibration.md, "FP8 GEMMs"): back to back, where the big ones
        # run power-capped, and in 10 ms bursts every 100 ms, which the
        # firmware runs at its top clock
        e4m3 = torch.float8_e4m3fn
        def fp8_make(M, N_, K):
            per_set = M * K + K * N_ + 2 * M * N_
            sets_n = max(2, min(8, math.ceil(GB / per_set)))
            def make():
                one = torch.ones((), device=dev)
                # _scaled_mm takes its second operand column-major
                sets = [(randn(M, K).to(e4m3), randn(N_, K).to(e4m3).t()) for _ in range(sets_n)]
                def fn(i):
                    a, b = sets[i % sets_n]
                    torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=bf16)
                return fn
            return make, per_set, sets_n
        def twins(M, N_, K, duty=None):
            """The shape on FP8 and on bf16 operands: back to back, or for
            duty = (period, on) seconds in bursts."""
            out = []
            for tag, maker in (("fp8", fp8_make), ("bf16", gemm_make)):
                mk, per, n_sets = maker(M, N_, K)
                name, cls = f"gemm_{tag}_m{M}_n{N_}_k{K}", "gemm"
                if duty is None:
                    note = f"{tag} {M}x{N_}x{K}, {n_sets} rotating sets"
                else:
                    period, on = duty
                    name += f"_duty{round(100 * on / period)}_p{round(period * 1e3)}"
                    cls = "mixed"
                    note = (f"{tag} {M}x{N_}x{K} GEMMs for {on * 1e3:.0f} ms then idle, "
                            f"period {period * 1e3:.0f} ms")
                out.append(Bench(name, cls + ("_fp8" if tag == "fp8" else ""), mk, 2 * M * N_ * K, per,
                                 kind="loop" if duty is None else "duty", duty=duty, note=note))
            return out
        burst = (0.100, 0.010)
        benches = ([benches[0]] + twins(8192, 8192, 8192) + twins(4096, 4096, 4096)
                   + twins(2048, 8192, 2048) + twins(8192, 8192, 8192, burst)
                   + twins(4096, 4096, 4096, burst) + [benches[-1]])
    if args.suite == "traffic":
        benches = traffic_benches(torch, args) + [benches[-1]]
    if args.suite == "toggle":
        # what the DRAM bus carries: the same 4 GiB device-to-device copy (copy
        # engines: no SM instruction) on data whose bits toggle differently,
        # the fp32 axpy on random, ReLU'd and bf16-valued data, and the fp32
        # GELU on random and bf16-valued data. Each row's note gives its data's
        # toggle density (bit_toggle_density). docs/calibration.md, "Bits on
        # the memory bus".
        def toggle_data(n_bytes, kind):
            if kind == "fp32_bits":
                return torch.randint(-2 ** 31, 2 ** 31 - 1, (n_bytes // 4,), device=dev,
                                     dtype=torch.int32, generator=g).view(fp32)
            if kind == "int64_index":
                return torch.randint(0, 200_000, (n_bytes // 8,), device=dev, dtype=torch.int64,
                                     generator=g)
            if kind == "fp32_zeros":
                return torch.zeros(n_bytes // 4, device=dev, dtype=fp32)
            if kind == "fp32_bf16vals":  # fp32 holding bf16-rounded N(0, 1) values
                return randn(n_bytes // 4, dtype=bf16).to(fp32)
            dtype = {"fp32": fp32, "bf16": bf16, "fp16": torch.float16}[kind.split("_")[0]]
            x = randn(n_bytes // torch.tensor([], dtype=dtype).element_size(), dtype=dtype)
            return torch.relu(x) if kind.endswith("_relu") else x
        def density(kind):
            return f"toggle density {bit_toggle_density(torch, toggle_data(64 * MB, kind)):.4f}"
        def toggle_copy(kind, tag=""):
            size = 4 * GB
            def make():
                src = toggle_data(size, kind)
                dst = torch.empty_like(src)
                def fn(i):
                    dst.copy_(src)
                return fn
            return Bench(f"copy_4GB_{kind}{tag}", "memcpy", make, 0, 2 * size,
                         note=f"dst.copy_(src), 4 GiB of {kind}, {density(kind)}")
        def toggle_axpy(kind):
            n = 1 << 28
            def make():
                x, y = toggle_data(4 * n, kind), toggle_data(4 * n, kind)
                z = torch.empty_like(x)
                def fn(i):
                    torch.add(y, x, alpha=0.5, out=z)
                return fn
            return Bench(f"ew_axpy_{kind}", "elementwise", make, 2 * n, 3 * n * 4,
                         note=f"z = y + 0.5 x as ew_axpy_fp32, {kind}, {density(kind)}")
        def toggle_gelu(kind):
            n = 1 << 28
            def make():
                x = toggle_data(4 * n, kind)
                def fn(i):
                    F.gelu(x)
                return fn
            return Bench(f"ew_gelu_{kind}", "elementwise", make, 8 * n, 2 * n * 4,
                         note=f"gelu(x) as ew_gelu_fp32, {kind}, {density(kind)}")
        benches = ([benches[0]] + [toggle_copy(k) for k in (
            "fp32", "fp32_zeros", "fp32_bits", "bf16", "fp16", "bf16_relu", "fp32_relu",
            "int64_index", "fp32_bf16vals")] + [toggle_copy("fp32", "_again")] +
            [toggle_axpy(k) for k in ("fp32", "fp32_relu", "fp32_bf16vals")] +
            [toggle_gelu(k) for k in ("fp32", "fp32_bf16vals")] + [benches[-1]])
    if args.suite == "l2":
        # the same elementwise kernels on data that stay in the L2 and on data
        # that stream through DRAM (docs/calibration.md, "Elementwise kernels
        # in L2"): one CUDA graph of back-to-back ops per call, so that no
        # host gap separates kernels of a few microseconds
        benches = [benches[0]] + l2_benches(torch, args) + [benches[-1]]
    if args.only:
        keep = set(args.only.split(","))
        benches = [b for b in benches if b.name in keep]
    return benches


def l2_benches(torch, args):
    """z = x + y (fp32, random x and y that never change, so the data stay
    random) on S MB per tensor, 3 S of traffic per kernel, and sum(x) over S
    MB (reads only), each as a CUDA graph of back-to-back kernels lasting
    ~2 ms. Busy time is the profiled kernel time (graphs leave ~0.3 us between
    kernels)."""
    dev = "cuda"
    g = torch.Generator(device=dev)
    g.manual_seed(4321)

    def graph_of(op, n):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                op()
            gr = torch.cuda.CUDAGraph()
            with torch.cuda.graph(gr):
                for _ in range(n):
                    op()
        torch.cuda.current_stream().wait_stream(s)
        return gr

    def graph_bench(name, cls, mb, traffic, make_op, what):
        """A graph of `per` ops on mb MB fp32 tensors, each op moving
        traffic x mb MB, ~2 ms a replay; make_op(n_el) allocates the data and
        returns the op."""
        n_el = mb * MB // 4
        per = max(8, min(1500, round(2e-3 / (traffic * mb * MB / 3.0e12))))
        def make():
            gr = graph_of(make_op(n_el), per)
            def fn(i):
                gr.replay()
            return fn
        b = Bench(name, cls, make, per * n_el, per * traffic * n_el * 4,
                  note=f"CUDA graph of {per} {what}, random data")
        b.busy_from_profile, b.profile_reps = True, 2
        return b

    def add_op(n_el):
        x = torch.randn(n_el, device=dev, generator=g)
        y = torch.randn(n_el, device=dev, generator=g)
        z = torch.empty_like(x)
        return lambda: torch.add(x, y, out=z)

    def sum_op(n_el):
        x = torch.randn(n_el, device=dev, generator=g)
        out = torch.empty((), device=dev)
        return lambda: torch.sum(x, dim=0, out=out)

    def add_bench(mb):
        return graph_bench(f"l2_add_fp32_{mb}MB", "elementwise", mb, 3, add_op,
                           f"z = x + y on {mb} MB fp32 tensors (footprint {3 * mb} MB)")

    def sum_bench(mb):
        return graph_bench(f"l2_sum_fp32_{mb}MB", "reduction", mb, 1, sum_op,
                           f"sum(x) over {mb} MB fp32")

    return ([add_bench(mb) for mb in (2, 4, 8, 12, 16, 24, 48, 128, 384)] +
            [sum_bench(mb) for mb in (8, 32, 512)])


OCC_GRIDS = (1, 8, 33, 66, 132)


def build_cuda_lib(out_dir, source, argtypes):
    """The kernels of `source` (beside this file) built by nvcc into a shared
    library in out_dir and loaded with ctypes; `argtypes` gives each launcher's
    argument types by name."""
    import ctypes
    import subprocess
    so = os.path.join(out_dir, os.path.splitext(source)[0] + ".so")
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-shared", "-Xcompiler", "-fPIC", "-o", so,
                    os.path.join(HERE, source)], check=True)
    lib = ctypes.CDLL(so)
    for name, types in argtypes.items():
        getattr(lib, name).argtypes = types
    return lib


def build_occupancy_lib(out_dir):
    """occupancy.cu's k_sleep and k_ffma launchers."""
    import ctypes as c
    return build_cuda_lib(out_dir, "occupancy.cu", {
        "launch_sleep": [c.c_int, c.c_int, c.c_longlong, c.c_void_p],
        "launch_ffma": [c.c_int, c.c_int, c.c_void_p, c.c_int, c.c_void_p]})


SLEEP_CYCLES = 4_000_000  # k_sleep: ~2 ms at 1980 MHz
FFMA_ITERS = 100_000      # k_ffma: ~2 ms per CTA wave at 1980 MHz


def current_stream(torch):
    return torch.cuda.current_stream().cuda_stream


def sleep_bench(torch, lib, grid, block):
    """k_sleep on `grid` CTAs of `block` threads: warps resident, almost
    nothing issued (the occupancy and traffic suites)."""
    def make():
        def fn(i):
            rc = lib.launch_sleep(grid, block, SLEEP_CYCLES, current_stream(torch))
            if rc:
                raise RuntimeError(f"k_sleep launch failed: cudaError {rc}")
        return fn
    b = Bench(f"sleep_g{grid}_b{block}", "elementwise", make, 0, 0,
              note=f"k_sleep<<<{grid}, {block}>>>: clock64 wait of {SLEEP_CYCLES} cycles "
                   "in __nanosleep(256) steps")
    b.grid, b.block = grid, block
    return b


def ffma_bench(torch, lib, grid, block):
    """k_ffma on `grid` CTAs of `block` threads: register-only FMA chains."""
    def make():
        out = torch.empty(max(grid, 1), device="cuda", dtype=torch.float32)
        def fn(i):
            rc = lib.launch_ffma(grid, block, out.data_ptr(), FFMA_ITERS, current_stream(torch))
            if rc:
                raise RuntimeError(f"k_ffma launch failed: cudaError {rc}")
        return fn
    b = Bench(f"ffma_g{grid}_b{block}", "elementwise", make,
              2 * 16 * FFMA_ITERS * grid * block, 0,
              note=f"k_ffma<<<{grid}, {block}>>>: 16 independent FMA chains x {FFMA_ITERS}")
    b.grid, b.block = grid, block
    return b


def occupancy_benches(torch, args):
    """Kernels that occupy only some SMs, uncapped (1980 MHz): the power of the
    "a kernel is running" term against the share of SMs a grid occupies, the
    SIMT term at the top clock, tensor work on a few SMs, and tiny kernels
    replayed from a CUDA graph. Rows carry `grid` and `block` in the details."""
    lib = build_occupancy_lib(args.out)
    dev = "cuda"
    benches = [Bench("idle_ctx", "idle", kind="idle",
                     note="CUDA context created, no kernel ever launched")]
    benches += [sleep_bench(torch, lib, g, 128) for g in OCC_GRIDS]
    benches.append(sleep_bench(torch, lib, 132, 1024))
    benches += [ffma_bench(torch, lib, g, 256) for g in OCC_GRIDS + (264,)]

    bf16 = torch.bfloat16
    def small_gemm(M, N, K):
        def make():
            sets = [(torch.randn(M, K, device=dev, dtype=bf16),
                     torch.randn(K, N, device=dev, dtype=bf16),
                     torch.empty(M, N, device=dev, dtype=bf16)) for _ in range(4)]
            def fn(i):
                a, b_, c = sets[i % 4]
                torch.matmul(a, b_, out=c)
            return fn
        return Bench(f"gemm_bf16_m{M}_n{N}_k{K}", "gemm", make, 2 * M * N * K,
                     2 * (M * K + K * N + M * N),
                     note="few-CTA GEMM (grid in kernel_grids), 4 rotating sets")
    benches += [small_gemm(256, 256, 32768), small_gemm(1024, 1024, 8192),
                small_gemm(2048, 2048, 8192)]

    # fp32 matrix products: SIMT FFMA (TF32 off) and TF32 tensor cores
    def fp32_gemm(n, tf32):
        def make():
            sets = [(torch.randn(n, n, device=dev), torch.randn(n, n, device=dev),
                     torch.empty(n, n, device=dev)) for _ in range(2)]
            def fn(i):
                torch.backends.cuda.matmul.allow_tf32 = tf32
                a, b_, c = sets[i % 2]
                torch.matmul(a, b_, out=c)
            return fn
        tag = "tf32" if tf32 else "fp32"
        return Bench(f"gemm_{tag}_m{n}_n{n}_k{n}", "gemm" if tf32 else "elementwise", make,
                     2 * n ** 3, 3 * 4 * n * n,
                     note=f"torch.matmul fp32 {n}^3, allow_tf32={tf32} "
                          "(class elementwise for the SIMT one: no tensor FLOPs)")
    benches += [fp32_gemm(4096, False), fp32_gemm(8192, True)]

    # tiny kernels replayed back to back from a CUDA graph (no host gaps)
    n_small, per_graph = 4096, 200
    def make_graph():
        x = torch.randn(n_small, device=dev)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                x.mul_(1.0000001)
            with torch.cuda.graph(g):
                for _ in range(per_graph):
                    x.mul_(1.0000001)
        torch.cuda.current_stream().wait_stream(s)
        def fn(i):
            g.replay()
        return fn
    tg = Bench("tiny_graph_mul4096", "elementwise", make_graph, per_graph * n_small,
               2 * per_graph * n_small * 4,
               note=f"CUDA graph of {per_graph} in-place mul on {n_small} fp32 (L2-resident; "
                    "bytes nominal); busy_s = profiled kernel time per op x ops in window")
    tg.busy_from_profile = True
    benches.append(tg)
    return benches


def build_traffic_lib(out_dir):
    """traffic.cu's k_copy and k_scatter launchers."""
    import ctypes as c
    return build_cuda_lib(out_dir, "traffic.cu", {
        "launch_copy": [c.c_int, c.c_int, c.c_void_p, c.c_void_p, c.c_longlong, c.c_int, c.c_uint,
                        c.c_void_p],
        "launch_scatter": [c.c_int, c.c_int, c.c_void_p, c.c_void_p, c.c_void_p, c.c_longlong,
                           c.c_void_p]})


def traffic_benches(torch, args):
    """SMs that stay resident while what they move falls (docs/calibration.md,
    "SMs that are resident but move little data"): a float4 copy through DRAM
    and within the L2 on 8 to 1,056 CTAs, the full grid throttled by a
    __nanosleep after every float4, an atomic scatter, and the occupancy
    suite's sleeping and FFMA rows on every SM for comparison across boards.
    Rows carry `grid` and `block` in the details; bytes are the copy's reads
    and writes (the scatter's: index, value and the read-modify-write)."""
    lib = build_traffic_lib(args.out)
    occ = build_occupancy_lib(args.out)
    dev = "cuda"
    benches = [Bench("idle_ctx", "idle", kind="idle",
                     note="CUDA context created, no kernel ever launched")]

    def copy_bench(where, grid, sleep_ns, block=256):
        mb, reps = (256, 1) if where == "dram" else (4, 64)
        n = mb * 2 ** 20 // 16

        def make():
            src = torch.randn(n * 4, device=dev)
            dst = torch.empty_like(src)

            def fn(i):
                rc = lib.launch_copy(grid, block, src.data_ptr(), dst.data_ptr(), n, reps,
                                     sleep_ns, current_stream(torch))
                if rc:
                    raise RuntimeError(f"k_copy launch failed: cudaError {rc}")
            return fn
        tag = f"copy_{where}_g{grid}_b{block}" + (f"_s{sleep_ns}" if sleep_ns else "")
        b = Bench(tag, "elementwise", make, 0, 2 * 16 * n * reps,
                  note=f"k_copy<<<{grid}, {block}>>>: {mb} MB to {mb} MB x {reps}, "
                       f"__nanosleep({sleep_ns}) per float4")
        b.grid, b.block = grid, block
        return b

    def scatter_bench(grid=1056, block=256):
        n, table = 64 * 2 ** 20, 4 * 2 ** 20

        def make():
            idx = torch.randint(0, table, (n,), device=dev, dtype=torch.int32)
            val = torch.randn(n, device=dev)
            out = torch.zeros(table, device=dev)

            def fn(i):
                rc = lib.launch_scatter(grid, block, idx.data_ptr(), val.data_ptr(),
                                        out.data_ptr(), n, current_stream(torch))
                if rc:
                    raise RuntimeError(f"k_scatter launch failed: cudaError {rc}")
            return fn
        b = Bench(f"scatter_g{grid}_b{block}", "elementwise", make, n, 16 * n,
                  note=f"k_scatter<<<{grid}, {block}>>>: atomicAdd of {n} values at random "
                       f"indices into {table} fp32")
        b.grid, b.block = grid, block
        return b

    for where in ("dram", "l2"):
        benches += [copy_bench(where, g, 0) for g in (8, 33, 132, 1056)]
        benches += [copy_bench(where, 1056, s) for s in (4000, 16000, 64000)]
    benches.append(copy_bench("dram", 66, 0))
    benches.append(scatter_bench())
    benches += [sleep_bench(torch, occ, 132, 128), ffma_bench(torch, occ, 132, 256)]
    return benches


class Runner:
    def __init__(self, torch, sampler, args):
        self.torch, self.sampler, self.args = torch, sampler, args

    def _anchor(self):
        torch = self.torch
        torch.cuda.synchronize()
        ev = torch.cuda.Event(enable_timing=True)
        ev.record()
        h0 = time.perf_counter()
        ev.synchronize()
        return ev, h0

    def estimate_op_time(self, fn):
        torch = self.torch
        for i in range(3):
            fn(i)
        torch.cuda.synchronize()
        n = 5
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for i in range(n):
            fn(i)
        e.record()
        e.synchronize()
        return s.elapsed_time(e) / 1e3 / n

    def run_loop(self, b, fn, op_t):
        torch, a = self.torch, self.args
        k = b.chunk or max(1, round(a.chunk_s / max(op_t, 1e-7)))
        ahead = max(2, math.ceil(a.ahead_s / max(k * op_t, 1e-7)))
        anchor, h0 = self._anchor()
        pending = collections.deque()
        iv = []

        def retire():
            s, e = pending.popleft()
            e.synchronize()
            iv.append((h0 + anchor.elapsed_time(s) / 1e3, h0 + anchor.elapsed_time(e) / 1e3))
        i = 0
        end = time.perf_counter() + a.warmup_s + a.window_s + a.tail_s
        Ev = torch.cuda.Event
        while time.perf_counter() < end:
            s, e = Ev(enable_timing=True), Ev(enable_timing=True)
            s.record()
            for _ in range(k):
                fn(i)
                i += 1
            e.record()
            pending.append((s, e))
            if len(pending) > ahead:   # bound how far the host runs ahead of the GPU
                retire()
        torch.cuda.synchronize()
        while pending:
            retire()
        return iv, k, {"ops_issued": i, "chunk_ops": k, "max_ahead_chunks": ahead}

    def run_duty(self, b, fn, op_t):
        torch, a = self.torch, self.args
        period, on = b.duty
        k = max(1, round(on / op_t))
        anchor, h0 = self._anchor()
        pairs = []
        i = 0
        end = time.perf_counter() + a.warmup_s + a.window_s + a.tail_s
        Ev = torch.cuda.Event
        while time.perf_counter() < end:
            t_per = time.perf_counter()
            s, e = Ev(enable_timing=True), Ev(enable_timing=True)
            s.record()
            for _ in range(k):
                fn(i)
                i += 1
            e.record()
            e.synchronize()
            pairs.append((s, e))
            rem = period - (time.perf_counter() - t_per)
            if rem > 0:
                time.sleep(rem)
        torch.cuda.synchronize()
        iv = [(h0 + anchor.elapsed_time(s) / 1e3, h0 + anchor.elapsed_time(e) / 1e3)
              for s, e in pairs]
        return iv, k, {"ops_issued": i, "burst_ops": k, "period_s": period, "on_s": on}


def window_from_ticks(rows, lo, hi):
    ticks = nr.energy_ticks(rows)
    w = nr.tick_window(ticks, lo, hi)
    if w is None:
        return None
    (ta, ea, ua), (tb, eb, ub) = w
    return {"ta": ta, "tb": tb, "ea": ea, "eb": eb, "edge_uncert_s": ua + ub,
            "n_ticks": sum(1 for t in ticks if ta <= t[0] <= tb)}


def summarise(b, rows, win, iv, k, extra, source):
    ta, tb = win["ta"], win["tb"]
    window_s = tb - ta
    energy_j = (win["eb"] - win["ea"]) / 1e3
    sm = nr.weighted_stats(rows, nr.SM, ta, tb)
    mem = nr.weighted_stats(rows, nr.MEM, ta, tb)
    pin = nr.weighted_stats(rows, nr.PINST, ta, tb)
    tmp = nr.weighted_stats(rows, nr.TEMP, ta, tb)
    busy, ops = 0.0, 0.0
    for s, e in iv:
        ov = min(e, tb) - max(s, ta)
        if ov > 0 and e > s:
            busy += ov
            ops += k * ov / (e - s)
    row = {
        "name": b.name, "class": b.cls,
        "core_mhz": round(sm["mean"], 1), "core_mhz_p10": int(sm["q"][0]),
        "core_mhz_p90": int(sm["q"][2]), "memory_mhz": round(mem["mean"], 1),
        "window_s": round(window_s, 4), "busy_s": round(busy, 4),
        "energy_j": round(energy_j, 3), "mean_power_w": round(energy_j / window_s, 2),
        "flops": int(round(b.flops * ops)), "dram_bytes": int(round(b.bytes * ops)),
        "launches": 0, "reasons_mask": nr.reasons_or(rows, ta, tb), "source": source,
    }
    det = {
        "note": b.note, "kind": b.kind, "window_t0": ta, "window_t1": tb,
        "window_edge_uncert_s": round(win["edge_uncert_s"], 4), "energy_ticks": win["n_ticks"],
        "ops_in_window": ops, "flops_per_op": b.flops, "dram_bytes_per_op": b.bytes,
        "busy_fraction": busy / window_s if window_s > 0 else None,
        "tflops_per_busy_s": (b.flops * ops / busy / 1e12) if busy > 0 else None,
        "tbytes_per_busy_s": (b.bytes * ops / busy / 1e12) if busy > 0 else None,
        "sm_mhz": sm, "mem_mhz": mem, "power_instant_w": {k2: ([x / 1e3 for x in v] if isinstance(v, list) else v / 1e3) for k2, v in pin.items()} if pin else None,
        "temp_c": tmp, "reasons": nr.reasons_names(row["reasons_mask"]),
    }
    if iv:
        det["gpu_t0"], det["gpu_t1"] = iv[0][0], iv[-1][1]
        det["op_time_s"] = busy / ops if ops > 0 else None
    det.update(extra)
    return row, det


def count_kernels(torch, fn, reps=1):
    """Kernels (and memcpy/memset) issued by `reps` calls of fn, and their
    summed durations, via torch.profiler."""
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for i in range(reps):
            fn(i)
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    p.export_chrome_trace(path)
    with open(path) as f:
        ev = json.load(f).get("traceEvents", [])
    os.unlink(path)
    gpu = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    grids = sorted({(e["name"][:60], str(e.get("args", {}).get("grid")),
                     str(e.get("args", {}).get("block"))) for e in gpu})
    return (len(gpu) / reps, [e["name"] for e in gpu], sum(e["dur"] for e in gpu) / 1e6 / reps,
            grids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--warmup-s", type=float, default=1.5)
    ap.add_argument("--window-s", type=float, default=4.5)
    ap.add_argument("--tail-s", type=float, default=0.35)
    ap.add_argument("--chunk-s", type=float, default=0.002)
    ap.add_argument("--ahead-s", type=float, default=0.03)
    ap.add_argument("--sample-s", type=float, default=0.01)
    ap.add_argument("--only", default="", help="comma-separated benchmark names")
    ap.add_argument("--suite", choices=("calib", "extra", "occupancy", "burst", "l2", "data", "traffic", "fp8", "toggle"), default="calib")
    ap.add_argument("--no-deep-idle", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    gpu = nr.Gpu(0)
    info = gpu.device_info()            # before any CUDA context exists
    date = time.strftime("%Y-%m-%d", time.gmtime())
    # The board measured: the suites run on whatever GPU the machine has.
    board = f"{info.get('name', 'unknown GPU')} board {str(info.get('uuid', '?'))[:12]}"
    source = f"measured: {board} {date} microbench.py"
    if args.suite != "calib":
        source += f" --suite {args.suite}"
    sampler = nr.Sampler(gpu, args.sample_s)
    sampler.start()
    rows_out, details = [], {}

    def idle_window(name, cls, note, settle):
        sampler.phase = name
        t0 = time.perf_counter()
        time.sleep(settle + args.window_s + args.tail_s)
        t1 = time.perf_counter()
        rows = sampler.snapshot()
        win = window_from_ticks(rows, t0 + settle, t1 - 0.15)
        if win is None:
            print(f"{name}: no energy ticks", flush=True)
            return
        b = Bench(name, cls, kind="idle", note=note)
        row, det = summarise(b, rows, win, [], 1, {}, source)
        rows_out.append(row)
        details[name] = det

    # 1. deep idle: no CUDA context yet (torch not even imported)
    if not args.no_deep_idle:
        idle_window("idle_deep", "deep_idle", "no CUDA context (before torch initialises CUDA)", 0.3)

    import torch
    import torch.nn.functional as F
    sampler.phase = "ctx_init"
    torch.cuda.init()
    torch.empty(1, device="cuda")       # creates the primary context; no kernel
    props = torch.cuda.get_device_properties(0)
    info["torch"] = {
        "version": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "device_name": props.name,
        "multi_processor_count": props.multi_processor_count,
        "total_memory": props.total_memory,
        "l2_cache_size": getattr(props, "L2_cache_size", None),
        "capability": f"{props.major}.{props.minor}",
    }
    runner = Runner(torch, sampler, args)
    benches = build_benches(torch, F, args)
    fns = {}
    for b in benches:
        t_start = time.perf_counter()
        try:
            if b.kind == "idle":
                idle_window(b.name, b.cls, b.note, args.warmup_s)
                print(f"[{time.perf_counter() - t_start:5.1f}s] {b.name} done", flush=True)
                continue
            sampler.phase = b.name + ":setup"
            fn = b.make()
            op_t = runner.estimate_op_time(fn)
            sampler.phase = b.name
            if b.kind == "duty":
                iv, k, extra = runner.run_duty(b, fn, op_t)
            else:
                iv, k, extra = runner.run_loop(b, fn, op_t)
            sampler.phase = "between"
            extra["op_time_estimate_s"] = op_t
            rows = sampler.snapshot()
            lo = iv[0][0] + args.warmup_s
            hi = iv[-1][1] - 0.15
            win = window_from_ticks(rows, lo, hi)
            if win is None:
                raise RuntimeError("no energy ticks inside the window")
            row, det = summarise(b, rows, win, iv, k, extra, source)
            if row["window_s"] < 4.0:
                det["warning"] = f"window {row['window_s']} s < 4 s"
            rows_out.append(row)
            details[b.name] = det
            fns[b.name] = fn
            print(f"[{time.perf_counter() - t_start:5.1f}s] {b.name}: {row['mean_power_w']} W "
                  f"{row['core_mhz']} MHz busy {det['busy_fraction']:.3f} "
                  f"op {op_t*1e3:.3f} ms", flush=True)
        except Exception as e:
            traceback.print_exc()
            details[b.name] = {"error": repr(e)}
            sampler.phase = "between"
        finally:
            if b.kind != "idle":
                torch.cuda.synchronize()

    # kernels per operation (after every energy window)
    sampler.phase = "kernel_count"
    for row in rows_out:
        fn = fns.get(row["name"])
        if fn is None:
            continue
        try:
            b = next(x for x in benches if x.name == row["name"])
            reps = getattr(b, "profile_reps", 200) if b.busy_from_profile else 1
            n, names, kt, grids = count_kernels(torch, fn, reps)
            d = details[row["name"]]
            d["kernel_grids"] = grids[:8]
            if hasattr(b, "grid"):
                d["grid"], d["block"] = b.grid, b.block
            d["kernels_per_op"] = n
            d["kernel_names"] = sorted(set(names))[:8]
            d["profiled_kernel_time_per_op_s"] = kt
            row["launches"] = int(round(n * d["ops_in_window"]))
            if b.busy_from_profile:
                d["busy_s_events"] = row["busy_s"]
                row["busy_s"] = round(kt * d["ops_in_window"], 4)
                d["busy_fraction"] = row["busy_s"] / row["window_s"]
        except Exception as e:
            details[row["name"]]["kernel_count_error"] = repr(e)
    sampler.phase = "end"
    time.sleep(0.05)
    sampler.stop()

    # ---- outputs -------------------------------------------------------------
    with open(os.path.join(args.out, "measurements.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        w.writeheader()
        for r in rows_out:
            w.writerow(r)
    with gzip.open(os.path.join(args.out, "samples.csv.gz"), "wt") as f:
        nr.write_samples_csv(sampler.rows, f)
    info["sampler"] = {"period_s": args.sample_s, "rows": len(sampler.rows),
                       "errors": sampler.errors}
    info["clock_event_reason_bits"] = {hex(k): v for k, v in nr.REASON_BITS.items()}
    info["date_utc"] = date
    info["unix_minus_perf_counter_s"] = time.time() - time.perf_counter()
    with open(os.path.join(args.out, "device_info.json"), "w") as f:
        json.dump(info, f, indent=1)
    with open(os.path.join(args.out, "bench_details.json"), "w") as f:
        json.dump({"args": vars(args), "benches": details}, f, indent=1, default=str)

    # ---- summary table -------------------------------------------------------
    hdr = (f"{'name':28s} {'class':11s} {'MHz':>7s} {'p10':>5s} {'p90':>5s} {'mem':>5s} "
           f"{'W':>7s} {'win_s':>6s} {'E_J':>8s} {'busy%':>6s} {'TF/s':>7s} {'TB/s':>6s} "
           f"{'launch':>7s} {'rsn':>5s}")
    print(hdr)
    for r in rows_out:
        d = details[r["name"]]
        tf = d.get("tflops_per_busy_s") or 0.0
        tb = d.get("tbytes_per_busy_s") or 0.0
        bf = 100 * (d.get("busy_fraction") or 0.0)
        print(f"{r['name']:28s} {r['class']:11s} {r['core_mhz']:7.1f} {r['core_mhz_p10']:5d} "
              f"{r['core_mhz_p90']:5d} {r['memory_mhz']:5.0f} {r['mean_power_w']:7.1f} "
              f"{r['window_s']:6.3f} {r['energy_j']:8.1f} {bf:6.1f} {tf:7.1f} {tb:6.2f} "
              f"{r['launches']:7d} {hex(r['reasons_mask']):>5s}")
    errs = {k: v["error"] for k, v in details.items() if "error" in v}
    if errs:
        print("ERRORS:", errs)


if __name__ == "__main__":
    main()
