"""Profiled steps of a Kineto trace, shared by the capture scripts.

Pure Python (torch only inside profile_steps), so that the trace logic is
tested anywhere (traces/capture/tests).

- ``profile_steps``: run a step function under torch.profiler, each traced
  step inside a ``ProfilerStep#<i>`` range, and export the Chrome trace.
- ``gpu_events_by_step``: the GPU events (kernels, memcpy, memset) of each
  ProfilerStep, joined to the step whose range holds their launch through
  the correlation id.
- ``trace_stats``: per step, counts and GPU busy time (what the
  measurement files record under ``profile``).
"""
import gzip
import json
import time

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver")


def profile_steps(step, n_active, path, cuda=True, light=False, bounds=None, warmup=1):
    """Profile n_active steps after `warmup` untraced profiler warm-up steps
    and write the trace to path; returns the host duration of each traced step
    (perf_counter around step()). On a GPU the last warm-up step drains before
    tracing starts (no orphan kernels lead the trace) and the last traced
    step ends with a synchronize (all its kernels land in the trace). Several
    warm-up steps keep a power-capped GPU loaded until its firmware has
    capped again after the idle before the profiler (capture.py
    --profile-warmup-s): otherwise the traced steps run at the clocks of a
    GPU just back from idle, not at the measured window's.

    light: CUDA activity only (kernels, copies and the CUDA runtime calls that
    launched them, from CUPTI), no CPU operators and no shapes: the timing
    trace, whose host is barely slowed by the profiler. bounds, a list, gets
    the unix time (us) of each traced step's start and end."""
    import torch
    from torch.profiler import profile, schedule, ProfilerActivity
    if warmup < 1:
        raise ValueError("profile_steps: warmup must be >= 1")
    if light:
        acts = [ProfilerActivity.CUDA]
    else:
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sched = schedule(wait=0, warmup=warmup, active=n_active, repeat=1)
    done, host = {}, []

    def on_ready(p):
        p.export_chrome_trace(path)
        done["ok"] = True
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    with profile(activities=acts, record_shapes=not light, schedule=sched,
                 on_trace_ready=on_ready) as prof:
        for i in range(warmup + n_active):
            u0 = time.time_ns()
            t0 = time.perf_counter()
            step()
            if i in (warmup - 1, warmup + n_active - 1):
                sync()
            if i >= warmup:
                host.append(time.perf_counter() - t0)
                if bounds is not None:
                    bounds.append([u0 / 1e3, time.time_ns() / 1e3])
            prof.step()
    if not done:
        raise RuntimeError("profiler produced no trace")
    return host


def load_events(path):
    """The traceEvents list of a Chrome trace (.json or .json.gz)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        ev = json.load(f).get("traceEvents")
    if not isinstance(ev, list):
        raise ValueError(f"{path}: no traceEvents list")
    return ev


def profiler_steps(ev):
    """The ProfilerStep# ranges, in time order."""
    return sorted((e for e in ev if e.get("cat") == "user_annotation"
                   and str(e.get("name", "")).startswith("ProfilerStep#")),
                  key=lambda e: e["ts"])


def in_step(e, s):
    return s["ts"] <= e["ts"] <= s["ts"] + s["dur"]


def gpu_events_by_step(ev, steps):
    """([GPU events of step j] for each step, {correlation: step}): a GPU
    event belongs to the step whose range holds its launch call."""
    corr_step = {}
    for e in ev:
        c = e.get("args", {}).get("correlation") if e.get("cat") in RUNTIME_CATS else None
        if c is None:
            continue
        for j, s in enumerate(steps):
            if in_step(e, s):
                corr_step[c] = j
                break
    per = [[] for _ in steps]
    for e in ev:
        if e.get("cat") in GPU_CATS:
            j = corr_step.get(e.get("args", {}).get("correlation"))
            if j is not None:
                per[j].append(e)
    return per, corr_step


def trace_stats(path):
    """Per ProfilerStep: kernels, memcpy/memset, operators, runtime calls,
    GPU busy time (summed durations) and span."""
    ev = load_events(path)
    steps = profiler_steps(ev)
    per, corr_step = gpu_events_by_step(ev, steps)
    runtime = [e for e in ev if e.get("cat") in RUNTIME_CATS]
    ops = [e for e in ev if e.get("cat") == "cpu_op"]
    gpu = [e for e in ev if e.get("cat") in GPU_CATS]
    out = []
    for s, mine in zip(steps, per):
        out.append({
            "name": s["name"], "cpu_ms": s["dur"] / 1e3,
            "kernels": sum(1 for g in mine if g["cat"] == "kernel"),
            "memcpy": sum(1 for g in mine if g["cat"] == "gpu_memcpy"),
            "memset": sum(1 for g in mine if g["cat"] == "gpu_memset"),
            "cpu_ops": sum(1 for e in ops if in_step(e, s)),
            "runtime_calls": sum(1 for e in runtime if in_step(e, s)),
            "gpu_busy_ms": sum(g["dur"] for g in mine) / 1e3,
            "gpu_span_ms": ((max(g["ts"] + g["dur"] for g in mine) - min(g["ts"] for g in mine)) / 1e3
                            if mine else 0.0),
        })
    return {"steps": out, "kernels_total": sum(1 for g in gpu if g["cat"] == "kernel"),
            "unattributed_gpu_events": sum(1 for g in gpu
                                           if g.get("args", {}).get("correlation") not in corr_step)}
