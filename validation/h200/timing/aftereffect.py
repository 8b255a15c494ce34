#!/usr/bin/env python3
"""Does the host stay slow after the profiler? Blocks before and after.

One workload per process (a clean start): build, warm up, then
  U1 U2 U3   unprofiled blocks (~1 s each; host time of every step kept),
  light      one untraced + N traced steps under torch.profiler with CUDA
             activity only (capture.py --timing-steps), exported to a
             scratch file,
  A1 A2 A3   unprofiled blocks,
  full       the same under CPU + CUDA activity with record_shapes (every
             capture's trace), exported,
  F1 F2 F3   unprofiled blocks.
--control: the light and full passes replaced by as much Python work as an
export without any profiler (a 30 MB JSON document built, written, deleted),
to tell the profiler's after-effect from its export's.
Prints one JSON line. Time only: no NVML, nothing on the GPU is set. Usage:
  python3 aftereffect.py [--control] WORKLOAD [key=value ...]
"""
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

import capture  # noqa: E402
import kineto_steps  # noqa: E402


def block(step, n):
    torch.cuda.synchronize()
    t = [time.perf_counter()]
    for _ in range(n):
        step()
        t.append(time.perf_counter())
    torch.cuda.synchronize()
    return statistics.fmean(b - a for a, b in zip(t, t[1:]))


def prof(step, light, n=5):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    t0 = time.perf_counter()
    host = kineto_steps.profile_steps(step, n, path, light=light)
    total = time.perf_counter() - t0
    os.unlink(path)
    return {"host_mean": statistics.fmean(host), "with_export_s": total}


def busywork():
    t0 = time.perf_counter()
    doc = {"traceEvents": [{"ph": "X", "cat": "kernel", "name": f"k{i}", "ts": i * 3.5, "dur": 2.0,
                            "args": {"correlation": i, "grid": [i % 97, 1, 1]}} for i in range(200000)]}
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f)
    os.unlink(path)
    del doc
    return {"host_mean": 0.0, "with_export_s": time.perf_counter() - t0}


def main():
    args = sys.argv[1:]
    control = args[:1] == ["--control"]
    if control:
        args = args[1:]
    wl = args[0]
    opts = dict(a.split("=", 1) for a in args[1:])
    torch.manual_seed(0)
    got = capture.load_workload(wl)(torch.device("cuda"), **opts)
    step = got["step"] if isinstance(got, dict) else got
    for _ in range(5):
        step()
    est = block(step, 5)
    n = max(8, min(3000, int(1.0 / max(est, 1e-5))))
    r = {"workload": wl, "options": opts, "n": n, "control": control, "env_TEARDOWN_CUPTI": os.environ.get("TEARDOWN_CUPTI")}
    r["U"] = [block(step, n) for _ in range(3)]
    r["light"] = busywork() if control else prof(step, True)
    r["A"] = [block(step, n) for _ in range(3)]
    r["full"] = busywork() if control else prof(step, False)
    r["F"] = [block(step, n) for _ in range(3)]
    ms = lambda xs: [round(x * 1e3, 3) for x in xs]  # noqa: E731
    print(f"{wl.rpartition(':')[2]} {opts} TEARDOWN_CUPTI={r['env_TEARDOWN_CUPTI']}{' control' if control else ''}: U {ms(r['U'])} "
          f"light {r['light']['host_mean']*1e3:.3f} A {ms(r['A'])} full {r['full']['host_mean']*1e3:.3f} "
          f"F {ms(r['F'])}", flush=True)
    print("JSON " + json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
