#!/usr/bin/env python3
"""How stable is the profiler's host stretch? Paired, interleaved blocks.

For each workload (capture.py's FILE.py:FUNC or FUNC plus key=value options):
build, warm up, then ROUNDS rounds of
  - an unprofiled block of steps, the host time of every step recorded
    (perf_counter between step() returns, as capture.py's host_step_s_mean),
  - a profiled block (torch.profiler, CPU + CUDA, record_shapes, as every
    capture: one untraced warm-up step, then PROF traced steps; the trace is
    exported to a scratch file and thrown away, so the export costs as in a
    capture but no trace is kept).
A round's stretch is its profiled block's median host step over the median
of the unprofiled block before it. If the stretch of one workload moves
between rounds as much as it differs between workloads, the per-workload
factors of docs/validation.md ("Held-out workloads") are noise of the
capture, not a property of the workload. Also recorded: the same blocks
with Python's cyclic garbage collector frozen (gc.freeze + gc.disable), to
see how much of the spread of unprofiled steps the collector makes.

Time only: no NVML, nothing on the GPU is set. Usage:
  python3 stretch.py OUT.json [--rounds 4] [--unprof-s 1.0] [--prof 4]
"""
import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "traces", "capture"))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile, schedule  # noqa: E402

import capture  # noqa: E402

HELD = os.path.join(ROOT, "validation", "h200", "heldout", "workloads.py")
WORKLOADS = [  # tag, workload, options (as in each capture's measured.json)
    ("gpt2_hf_train_b1_t128", f"{HELD}:hf_gpt2_train", {"batch": "1", "seq": "128"}),
    ("mlp_train_b32", f"{HELD}:mlp_train", {}),
    ("encoder_small_train_b2", "smallbatch_train", {}),
    ("gpt3medium_train_b1_t512", "gpt3_train", {"preset": "medium"}),
    ("t5small_train_b16_t512", f"{HELD}:hf_t5_train", {}),
    ("mobilenetv3_train_b128", f"{HELD}:mobilenet_train", {}),
    ("moe8x_train_b8_t1024", "moe_train", {}),
    ("llama1b_decode_b1_kv512", "decode_kvcache", {}),
]


def unprofiled(step, n):
    torch.cuda.synchronize()
    t = [time.perf_counter()]
    for _ in range(n):
        step()
        t.append(time.perf_counter())
    torch.cuda.synchronize()
    return [b - a for a, b in zip(t, t[1:])]


def profiled(step, n):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    host = []
    sched = schedule(wait=0, warmup=1, active=n, repeat=1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=sched, on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for i in range(1 + n):
            t0 = time.perf_counter()
            step()
            if i in (0, n):
                torch.cuda.synchronize()
            if i > 0:
                host.append(time.perf_counter() - t0)
            prof.step()
    os.unlink(path)
    return host


def summary(xs):
    s = sorted(xs)
    q = lambda p: s[min(len(s) - 1, int(p * (len(s) - 1) + 0.5))]  # noqa: E731
    return {"n": len(s), "mean": statistics.fmean(s), "p10": q(0.1), "p50": q(0.5),
            "p90": q(0.9), "min": s[0], "max": s[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--unprof-s", type=float, default=1.0)
    ap.add_argument("--prof", type=int, default=4)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    dev = torch.device("cuda")
    res = {"torch": torch.__version__, "cpu_count": os.cpu_count(),
           "affinity": len(os.sched_getaffinity(0)), "workloads": {}}
    for tag, wl, opts in WORKLOADS:
        if a.only and a.only not in tag:
            continue
        t_start = time.perf_counter()
        torch.manual_seed(0)
        got = capture.load_workload(wl)(dev, **opts)
        step = got["step"] if isinstance(got, dict) else got
        est = statistics.median(unprofiled(step, 8)[3:])
        n = max(8, min(3000, int(a.unprof_s / max(est, 1e-5))))
        rounds = []
        for r in range(a.rounds):
            frozen = r == a.rounds - 1  # the last round with the collector frozen
            if frozen:
                gc.collect()
                gc.freeze()
                gc.disable()
            u = unprofiled(step, n)
            p = profiled(step, a.prof)
            if frozen:
                gc.enable()
                gc.unfreeze()
            su, sp = summary(u), summary(p)
            rounds.append({"gc_frozen": frozen, "unprofiled": su, "profiled": sp,
                           "profiled_steps_s": p,
                           "stretch_p50": sp["p50"] / su["p50"],
                           "stretch_mean": sp["mean"] / su["mean"]})
            print(f"{tag} round {r}{' gc-frozen' if frozen else ''}: unprof p10/p50/p90/mean "
                  f"{su['p10']*1e3:.2f}/{su['p50']*1e3:.2f}/{su['p90']*1e3:.2f}/{su['mean']*1e3:.2f} ms "
                  f"(n={n}) prof {[round(x*1e3, 2) for x in p]} ms  stretch p50 "
                  f"{rounds[-1]['stretch_p50']:.2f} mean {rounds[-1]['stretch_mean']:.2f}", flush=True)
        res["workloads"][tag] = {"workload": wl, "options": opts, "rounds": rounds,
                                 "seconds": time.perf_counter() - t_start}
        del step, got
        gc.collect()
        torch.cuda.empty_cache()
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
