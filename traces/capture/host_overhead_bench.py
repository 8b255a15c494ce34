#!/usr/bin/env python3
"""Paired profiled / unprofiled host timing: what torch.profiler costs the host.

For a few loop bodies of known shape (one operator and one launch, an
operator without a launch, a nested operator, a chain of elementwise ops) it
times R iterations without the profiler, then the same R iterations under
torch.profiler exactly as capture.py runs it (CPU + CUDA activities,
record_shapes=True; and once without record_shapes), and counts in the
exported trace the operators (``cpu_op``), runtime calls (``cuda_runtime`` /
``cuda_driver``) and kernels per iteration. The bodies are host-bound (tiny
tensors), so host time per iteration is what a launch-bound step is made of.

  python3 traces/capture/host_overhead_bench.py --out hostbench.json [--device cpu]

Output: JSON {variants: {name: {unprofiled_us, profiled_us, profiled_noshapes_us,
cpu_ops, runtime_calls, kernels (per iteration), reps...}}, software}.
"""
import argparse
import json
import os
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F


WARM = 20  # iterations run under the profiler before the timed ones


def bodies(device):
    a = torch.randn(256, device=device)
    x = torch.randn(8, 64, device=device)
    w = torch.randn(64, 64, device=device)
    b = torch.randn(64, device=device)

    def launch1():
        a.add_(1.0)

    def view_only():
        a.view(16, 16)

    def linear():
        F.linear(x, w, b)

    def chain8():
        y = a * 2.0
        y = y + 1.0
        y = y.relu()
        y = y * a
        y = y - 0.5
        y = y.sigmoid()
        y = y + a
        a.copy_(y)

    def layer_norm():
        F.layer_norm(x, (64,))
    return {"launch1": launch1, "view_only": view_only, "linear": linear,
            "chain8": chain8, "layer_norm": layer_norm}


def timed(fn, iters, sync):
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - t0) / iters


def count(path, iters):
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    c = {"cpu_ops": 0, "runtime_calls": 0, "kernels": 0}
    for e in ev:
        cat = e.get("cat")
        if cat == "cpu_op":
            c["cpu_ops"] += 1
        elif cat in ("cuda_runtime", "cuda_driver"):
            c["runtime_calls"] += 1
        elif cat == "kernel":
            c["kernels"] += 1
    return {k: v / iters for k, v in c.items()}


def profiled(fn, iters, sync, device, shapes):
    from torch.profiler import profile, ProfilerActivity
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts, record_shapes=shapes) as prof:
        for _ in range(WARM):  # profiler warm-up inside the session
            fn()
        sync()
        dt = timed(fn, iters, sync)
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    n = count(path, iters + WARM)
    os.unlink(path)
    return dt, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    out = {"variants": {}, "iters": args.iters, "reps": args.reps,
           "software": {"torch": torch.__version__, "cuda": torch.version.cuda},
           "profiler": "torch.profiler, CPU + CUDA activities; record_shapes=True as capture.py",
           "date_utc": time.strftime("%Y-%m-%d", time.gmtime())}
    for name, fn in bodies(device).items():
        for _ in range(50):
            fn()
        un = [timed(fn, args.iters, sync) for _ in range(args.reps)]
        pr, ns = [], None
        for _ in range(args.reps):
            dt, ns = profiled(fn, args.iters, sync, device, True)
            pr.append(dt)
        pn = [profiled(fn, args.iters, sync, device, False)[0] for _ in range(args.reps)]
        un2 = [timed(fn, args.iters, sync) for _ in range(args.reps)]
        r = {"unprofiled_us": statistics.median(un + un2) * 1e6,
             "unprofiled_us_all": [u * 1e6 for u in un + un2],
             "profiled_us": statistics.median(pr) * 1e6, "profiled_us_all": [p * 1e6 for p in pr],
             "profiled_noshapes_us": statistics.median(pn) * 1e6, **ns}
        out["variants"][name] = r
        print(f"{name:12s} unprof {r['unprofiled_us']:7.2f} us  prof {r['profiled_us']:7.2f} us  "
              f"noshapes {r['profiled_noshapes_us']:7.2f} us  ops {ns['cpu_ops']:.2f}  "
              f"rt {ns['runtime_calls']:.2f}  k {ns['kernels']:.2f}", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
