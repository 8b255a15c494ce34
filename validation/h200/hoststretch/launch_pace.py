#!/usr/bin/env python3
"""Does a trace's own launch pace predict its profiler stretch?

For every launch-bound capture of scripts/validation_table.py whose
measurement holds capture.py's paired host times: the own pairing F
(profiled over unprofiled host time per step) against the median duration of
the trace's kernel-launch runtime calls inside its ProfilerStep ranges (the
profiler's per-call cost plus the host's pace, as traced). Prints each
capture, then F's relative error for the default 2.06, for the median of
the other captures (leave-one-out) and for a line a + b x pace fitted on the
other captures (leave-one-out): rms and share within 10 %.
(docs/validation.md, "Profiler host overhead".)

  python3 validation/h200/hoststretch/launch_pace.py
"""
import gzip
import json
import os
import statistics
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validation_table import CAPTURES  # noqa: E402

LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")


def launch_pace(trace):
    events = [e for e in json.load(gzip.open(trace))["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in events if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#")]
    a = min(s["ts"] for s in steps)
    b = max(s["ts"] + s["dur"] for s in steps)
    return statistics.median(e["dur"] for e in events
                             if e.get("cat") == "cuda_runtime" and e.get("name") in LAUNCHES and a <= e["ts"] < b)


def main():
    rows = []
    for label, stem, _, bound in CAPTURES:
        if bound != "launch":
            continue
        m = json.load(open(os.path.join(ROOT, stem + ".measured.json")))
        if "host_step_s_mean" not in m or "host_step_s" not in m.get("profile", {}):
            continue
        f = statistics.mean(m["profile"]["host_step_s"]) / m["host_step_s_mean"]
        pace = launch_pace(os.path.join(ROOT, stem + ".kineto.json.gz"))
        rows.append((label, f, pace))
        print(f"{label:60s} F {f:5.2f}  launch {pace:5.2f} us")
    f = np.array([r[1] for r in rows])
    x = np.array([r[2] for r in rows])
    n = len(f)
    print(f"\n{n} captures; correlation of F with the launch pace {np.corrcoef(f, x)[0, 1]:.2f}")

    def report(name, pred):
        e = pred / f - 1
        print(f"{name:38s} rms {100 * np.sqrt(np.mean(e ** 2)):5.1f} %   within 10 %: "
              f"{int(np.sum(np.abs(e) < 0.10))} of {n}")

    report("default 2.06", np.full(n, 2.06))
    others = [np.arange(n) != i for i in range(n)]
    report("median of the others", np.array([np.median(f[o]) for o in others]))
    line = []
    for i, o in enumerate(others):
        b, a = np.polyfit(x[o], f[o], 1)
        line.append(a + b * x[i])
    report("a + b x pace, fitted on the others", np.array(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
