#!/usr/bin/env python3
"""Measures the GPU's idle time between consecutive kernels of one stream
(the device gap of compute.kernel_gap_ns / graph_kernel_gap_ns), unprofiled.

For each case, N copies of one operation are queued behind a long
torch.cuda._sleep so that the host is far ahead of the GPU; CUDA events
around the N kernels give their unprofiled span. A second, profiled
repetition of the same sequence (torch.profiler, CUDA activities) gives each
kernel's duration as CUPTI times it. The gap per kernel is
(unprofiled span - sum of the profiled durations) / (N - 1). The same for
the N operations captured in one CUDA graph and replayed. Read-only: no
clock, limit or mode is touched.

  python3 gap_bench.py --out gaps.json
"""
import argparse
import json
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile


def sleep_ms(ms):
    # ~1.98e6 cycles per ms at the top clock; a longer hold does no harm.
    torch.cuda._sleep(int(ms * 2.0e6))


def spans(fn, n, hold_ms):
    """Unprofiled span of fn's n kernels, queued behind a sleep."""
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    sleep_ms(hold_ms)
    e0.record()
    t0 = time.perf_counter()
    fn(n)
    host_ms = (time.perf_counter() - t0) * 1e3
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1), host_ms


def kernel_durations(fn, n, hold_ms):
    """CUPTI durations (us) and start gaps of the n kernels, profiled."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        sleep_ms(hold_ms)
        fn(n)
        torch.cuda.synchronize()
    evs = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and "sleep" not in e.name:
            evs.append((e.time_range.start, e.time_range.end, e.name))
    evs.sort()
    evs = evs[-n:]
    durs = [(b - a) for a, b, _ in evs]
    gaps = [evs[i + 1][0] - evs[i][1] for i in range(len(evs) - 1)]
    return durs, gaps, evs[0][2] if evs else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=600,
                    help="kernels per case; below the launch queue's depth (~1,000), so the host stays ahead")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device("cuda")
    n = args.n
    cases = {}
    bufs = {f"add_{mb}MB": torch.zeros(mb * 256 * 1024, device=dev)
            for mb in (1, 4, 16, 64, 128, 512)}
    bufs["add_4KB"] = torch.zeros(1024, device=dev)
    mats = {m: (torch.randn(m, m, device=dev, dtype=torch.bfloat16),
                torch.randn(m, m, device=dev, dtype=torch.bfloat16),
                torch.empty(m, m, device=dev, dtype=torch.bfloat16)) for m in (1024, 4096)}

    def add_fn(x):
        def fn(k):
            for _ in range(k):
                x.add_(1.0)
        return fn

    def mm_fn(m):
        a, b, c = mats[m]

        def fn(k):
            for _ in range(k):
                torch.mm(a, b, out=c)
        return fn

    def mix_fn(k):  # a kernel, then a memset, alternately
        x = bufs["add_1MB"]
        for i in range(k):
            if i % 2:
                x.zero_()
            else:
                x.add_(1.0)

    fns = {name: add_fn(x) for name, x in bufs.items()}
    fns["mm_bf16_1024"] = mm_fn(1024)
    fns["mm_bf16_4096"] = mm_fn(4096)
    fns["add_zero_1MB"] = mix_fn
    hold = 100  # ms of sleep ahead of the kernels: the host queues them all meanwhile
    for name, fn in fns.items():
        fn(50)
        torch.cuda.synchronize()
        durs, tgaps, kname = kernel_durations(fn, n, hold)
        sum_ms = sum(durs) / 1e3
        reps = []
        for _ in range(args.reps):
            span, host = spans(fn, n, hold)
            reps.append({"span_ms": span, "host_ms": host})
        # graph of the same n operations
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn(3)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            fn(n)
        replay = lambda k, g=g: g.replay()  # noqa: E731
        gdurs, ggaps, _ = kernel_durations(replay, n, hold)
        greps = []
        for _ in range(args.reps):
            span, host = spans(replay, n, hold)
            greps.append({"span_ms": span, "host_ms": host})
        spans_ms = [r["span_ms"] for r in reps]
        gspans_ms = [r["span_ms"] for r in greps]
        cases[name] = {
            "kernel": kname,
            "n": n,
            "traced_mean_duration_us": sum(durs) / len(durs),
            "traced_median_gap_us": statistics.median(tgaps),
            "unprofiled_span_ms": spans_ms,
            "host_enqueue_ms": [r["host_ms"] for r in reps],
            # the host queued every kernel before the GPU reached them: the
            # span is the GPU's alone
            "host_ahead": all(r["host_ms"] < 0.9 * hold for r in reps),
            "gap_us": (statistics.median(spans_ms) - sum_ms) * 1e3 / (n - 1),
            "graph_traced_mean_duration_us": sum(gdurs) / len(gdurs),
            "graph_traced_median_gap_us": statistics.median(ggaps),
            "graph_unprofiled_span_ms": gspans_ms,
            "graph_gap_us": (statistics.median(gspans_ms) - sum(gdurs) / 1e3) * 1e3 / (n - 1),
        }
        print(name, json.dumps({k: v for k, v in cases[name].items() if not isinstance(v, list)}))
        del g
    info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "cases": cases}
    with open(args.out, "w") as f:
        json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
