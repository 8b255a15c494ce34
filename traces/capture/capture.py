#!/usr/bin/env python3
"""Capture any PyTorch workload: a Kineto trace plus its NVML energy.

A workload is a Python callable named ``FILE.py:FUNC`` or ``package.module:FUNC``
(``FUNC`` alone looks in traces/capture/workloads.py). It is called as
``FUNC(device, **options)`` (options from ``--arg key=value``, as strings) and
returns either the step callable or ``{"step": callable, "meta": {...}}``. When
step() returns its loss (or an output), that value is checked for NaN and inf
after the energy window and after the profiled steps (``step_result`` in the
measurement; step_result.py).

Sequence (as capture_gpt3.py, which is now one workload among others):
  1. NVML snapshot and sampler thread (read-only; nothing on the GPU is set).
  2. build, then ``--warmup`` untimed steps (torch.compile compiles here).
  3. energy window WITHOUT the profiler: guard + N + guard steps back to back,
     N chosen so that the middle steps last ``--window-s`` (at least
     ``--min-steps``), a CUDA event after every step; energy from the NVML
     counter interpolated between its ticks at the window's two ends.
  4. ``--timing-steps`` N > 0: N steps under a light profiler (CUDA activity
     only: kernels and the runtime calls that launched them, no
     CPU operators, no shapes), after one untraced warm-up step: the timing
     trace, a measurement of the profiler (it still stretches the host
     1.15-1.83x; dvfsim does not read it: docs/validation.md, "Timing traces
     and the profiler's after-effect"); then ~1 s of unprofiled steps again.
  5. ``--profile-steps`` steps under torch.profiler (CPU + CUDA,
     record_shapes) after one untraced profiler warm-up step, each in a
     ``ProfilerStep#<i>`` range; the host and device time of every profiled
     step is recorded too, so that the profiled run pairs with the window.
Writes ``<tag>.kineto.json.gz``, ``<tag>.measured.json`` (read by
``dvfsim hw validate``), ``<tag>.nvml_samples.csv`` and, with
``--timing-steps``, ``<tag>.timing.kineto.json.gz`` into ``--out``.

``--ncu``: no NVML, no profiler; after the warm-up one step (``--ncu-steps``)
runs between cudaProfilerStart/Stop, for ``ncu --profile-from-start off``.
``--device cpu``: a smoke test of the workload and the trace path without a
GPU (no energy; the measurement file says so and `hw validate` refuses it).

Example:
  python3 traces/capture/capture.py --workload bert_train --arg batch=32 \
      --out out/ --tag bert_train_b32_t512
"""
import argparse
import gzip
import importlib
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import kineto_steps as steps_lib  # noqa: E402
import step_result  # noqa: E402

try:
    import nvml_readonly as nr  # noqa: E402
except ImportError:  # pragma: no cover
    nr = None


def load_workload(spec):
    """'file.py:func', 'pkg.mod:func' or 'func' (in workloads.py)."""
    mod_name, _, func = spec.rpartition(":")
    if not mod_name:
        mod_name, func = os.path.join(HERE, "workloads.py"), spec
    if mod_name.endswith(".py") or os.path.sep in mod_name:
        if not os.path.exists(mod_name):
            raise SystemExit(f"capture: workload file '{mod_name}' not found")
        s = importlib.util.spec_from_file_location("capture_workload", mod_name)
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(mod_name)
    if not hasattr(mod, func):
        raise SystemExit(f"capture: '{mod_name}' has no callable '{func}'")
    return getattr(mod, func)


def parse_args_kv(items):
    out = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k:
            raise SystemExit(f"capture: --arg wants key=value, got '{it}'")
        out[k] = v
    return out


class Clock:
    """Step boundaries: CUDA events mapped to host perf_counter time, or the
    host clock alone on a CPU device."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def run(self, step, n):
        """Run n steps back to back; return n+1 boundary times (s, host clock),
        the host time at which each step() call returned, and (w0, w1)."""
        self.sync()
        host_ret = []
        if not self.cuda:
            w0 = time.perf_counter()
            bounds = [w0]
            for _ in range(n):
                step()
                bounds.append(time.perf_counter())
            host_ret = bounds[1:]
            return bounds, host_ret, (w0, bounds[-1])
        anchor = torch.cuda.Event(enable_timing=True)
        anchor.record()
        h0 = time.perf_counter()
        anchor.synchronize()
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
        w0 = time.perf_counter()
        marks[0].record()
        for i in range(n):
            step()
            marks[i + 1].record()
            host_ret.append(time.perf_counter())
        torch.cuda.synchronize()
        w1 = time.perf_counter()
        bounds = [h0 + anchor.elapsed_time(m) / 1e3 for m in marks]
        return bounds, host_ret, (w0, w1)


def build(args, device):
    fn = load_workload(args.workload)
    torch.manual_seed(args.seed)
    got = fn(device, **parse_args_kv(args.arg))
    if callable(got):
        return got, {}
    if not isinstance(got, dict) or not callable(got.get("step")):
        raise SystemExit(f"capture: {args.workload} must return step() or {{'step': ..., 'meta': ...}}")
    return got["step"], dict(got.get("meta", {}))


def warmup(step, n, clock):
    bounds, _, _ = clock.run(step, n)
    tail = max(1, n // 2)
    return (bounds[-1] - bounds[-1 - tail]) / tail


def run_ncu(args, device):
    step, meta = build(args, device)
    warmup(step, args.warmup, Clock(device))
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for _ in range(args.ncu_steps):
        step()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"ncu: {args.ncu_steps} step(s) of {args.workload} profiled", flush=True)


def main():
    ap = argparse.ArgumentParser(description="General PyTorch capture: Kineto trace + NVML energy (read-only)")
    ap.add_argument("--workload", required=True, help="FILE.py:FUNC, pkg.module:FUNC or FUNC (workloads.py)")
    ap.add_argument("--arg", action="append", help="workload option key=value (repeatable)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="")
    ap.add_argument("--class", dest="klass", default="", help="workload class label for the record")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--window-s", type=float, default=2.5, help="length of the measured window")
    ap.add_argument("--min-steps", type=int, default=8)
    ap.add_argument("--max-steps", type=int, default=2000)
    ap.add_argument("--guard-s", type=float, default=0.35)
    # Profiler warm-up steps (traced, discarded) lasting at least this long:
    # a power-capped GPU idles while the profiler starts, and its firmware
    # lets the first steps after that run above the capped clock.
    ap.add_argument("--profile-warmup-s", type=float, default=0.35,
                    help="untraced profiler warm-up before the traced steps, in seconds (>= 1 step)")
    # Five: a replay inherits whatever its traced steps' host did, and the
    # host's pace moves from step to step (docs/validation.md, "Five traced
    # steps"); the shipped and earliest captures have two.
    ap.add_argument("--profile-steps", type=int, default=5)
    ap.add_argument("--timing-steps", type=int, default=0,
                    help="steps of a light (CUDA-only) timing trace after the energy window (0: none)")
    ap.add_argument("--sample-ms", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ncu", action="store_true", help="profile one step for Nsight Compute instead")
    ap.add_argument("--ncu-steps", type=int, default=1)
    args = ap.parse_args()
    device = torch.device(args.device)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("capture: CUDA is not available (use --device cpu for a smoke test)")
    if args.ncu:
        return run_ncu(args, device)
    tag = args.tag or args.workload.rpartition(":")[2]
    os.makedirs(args.out, exist_ok=True)
    use_nvml = device.type == "cuda" and nr is not None and nr.nv is not None
    sampler, info = None, {}
    if use_nvml:
        gpu = nr.Gpu(0)
        info = gpu.device_info()
        sampler = nr.Sampler(gpu, args.sample_ms / 1e3)
        sampler.start()
        sampler.phase = "build"
    t_start = time.perf_counter()
    clock = Clock(device)

    def phase(p):
        if sampler:
            sampler.phase = p
    step, meta = build(args, device)
    step = step_result.Remembering(step)
    t_built = time.perf_counter()
    phase("warmup")
    step_est = warmup(step, args.warmup, clock)
    t_warm = time.perf_counter()
    print(f"{tag}: built in {t_built - t_start:.1f} s, warm-up {t_warm - t_built:.1f} s, "
          f"step ~{step_est*1e3:.2f} ms", flush=True)

    n = max(args.min_steps, min(args.max_steps, math.ceil(args.window_s / max(step_est, 1e-5))))
    guard = max(2, math.ceil(args.guard_s / max(step_est, 1e-5)))
    phase("measure")
    bounds, host_ret, (w0, w1) = clock.run(step, 2 * guard + n)
    phase("post_measure")
    after_window = step_result.check(step.last)
    i0, i1 = guard, guard + n
    step_times = [bounds[i + 1] - bounds[i] for i in range(i0, i1)]
    measured = {}
    if use_nvml:
        time.sleep(0.25)  # let the counter tick past the last step
        rows = sampler.snapshot()
        fields = nr.window_fields(rows, bounds, i0, i1)
        measured.update({
            "name": info["name"], "driver": info["driver"],
            "power_limit_mW": info["power_limit_mW"],
            "power_limit_constraints_mW": info["power_limit_constraints_mW"],
            "mem_clocks": info["mem_clocks"], "graphics_clocks": info["graphics_clocks"],
            "max_clock_sm": info["max_clock_sm"], "max_clock_mem": info["max_clock_mem"],
            "app_clock_sm": info["app_clock_sm"], "default_app_clock_sm": info["default_app_clock_sm"],
            "board": {k: info.get(k) for k in ("uuid", "serial", "pci_info", "vbios", "board_part_number")},
            **fields,
        })
    else:
        dt = bounds[i1] - bounds[i0]
        measured.update({"name": f"{device.type} (no NVML)", "energy_source": "none",
                         "steps": [{"dt_s": dt, "steps": n, "energy_mJ": 0}],
                         "time_per_step_s": dt / n, "energy_per_step_j": 0.0, "mean_power_w": 0.0})

    timing = None
    if args.timing_steps > 0 and device.type == "cuda":
        phase("timing")
        fd, raw = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        tb = []
        host_t = steps_lib.profile_steps(step, args.timing_steps, raw, light=True, bounds=tb)
        tpath = os.path.join(args.out, f"{tag}.timing.kineto.json.gz")
        with open(raw, "rb") as f, gzip.open(tpath, "wb", compresslevel=6) as g:
            shutil.copyfileobj(f, g)
        os.unlink(raw)
        # the host once more without the profiler, right after the timing trace
        phase("post_timing")
        nb = max(args.min_steps, min(args.max_steps, math.ceil(1.0 / max(step_est, 1e-5))))
        _, hr, (v0, _) = clock.run(step, nb)
        after = [hr[i] - (hr[i - 1] if i > 0 else v0) for i in range(len(hr))]
        timing = {"steps": args.timing_steps, "profiler_warmup_steps": 1, "host_step_s": host_t,
                  "step_bounds_unix_us": tb,
                  "unprofiled_after": {"steps": nb, "host_step_s_mean": sum(after) / nb},
                  "note": "after the energy window, before the full profile: torch.profiler with CUDA activity only (no CPU "
                          "operators, no record_shapes); host_step_s is perf_counter around each "
                          "traced step(), step_bounds_unix_us its start and end in unix time; "
                          "unprofiled_after: ~1 s of unprofiled steps right after it"}
    phase("profile")
    fd, raw = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    fb = []
    prof_warmup = max(1, min(50, math.ceil(args.profile_warmup_s / max(step_est, 1e-5))))
    host_prof = steps_lib.profile_steps(step, args.profile_steps, raw, cuda=device.type == "cuda", bounds=fb,
                                        warmup=prof_warmup)
    phase("export")
    after_profile = step_result.check(step.last)
    stats = steps_lib.trace_stats(raw)
    kpath = os.path.join(args.out, f"{tag}.kineto.json.gz")
    with open(raw, "rb") as f, gzip.open(kpath, "wb", compresslevel=6) as g:
        shutil.copyfileobj(f, g)
    os.unlink(raw)
    phase("end")
    if sampler:
        time.sleep(0.02)
        sampler.stop()
    host_win = [host_ret[i] - (host_ret[i - 1] if i > 0 else w0) for i in range(i0, i1)]
    measured.update({
        "workload": args.workload, "options": parse_args_kv(args.arg), "class": args.klass,
        "tag": tag, "model": meta,
        "step_time_s_min_max": [min(step_times), max(step_times)],
        "host_step_s_mean": sum(host_win) / len(host_win),
        "guard_steps_each_side": guard, "warmup_steps": args.warmup,
        "host_wall_s_all_measured_steps": w1 - w0,
        "peak_mem_GB": torch.cuda.max_memory_allocated() / 1e9 if device.type == "cuda" else None,
        "profile": {"profiled_steps": args.profile_steps, "profiler_warmup_steps": prof_warmup,
                    "host_step_s": host_prof, "step_bounds_unix_us": fb, **stats,
                    "note": "profiled after the energy window (torch.profiler, CPU + CUDA, "
                            "record_shapes); the GPU is drained before the first traced step and "
                            "after the last; host_step_s is perf_counter around each traced step()"},
        **({"timing": timing} if timing else {}),
        "step_result": {"after_window": after_window, "after_profile": after_profile,
                        "note": step_result.NOTE},
        "clock_sync": {"unix_minus_perf_counter_s": time.time() - time.perf_counter(),
                       "note": "kineto ts (us) + baseTimeNanoseconds/1e3 is unix time in us"},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version() if device.type == "cuda" else None},
        "timing_s": {"build": t_built - t_start, "warmup": t_warm - t_built,
                     "total": time.perf_counter() - t_start},
        "date_utc": time.strftime("%Y-%m-%d", time.gmtime()),
        "tool": "traces/capture/capture.py",
    })
    if sampler:
        measured["sampler"] = {"period_s": args.sample_ms / 1e3, "rows": len(sampler.rows),
                               "errors": sampler.errors}
    with open(os.path.join(args.out, f"{tag}.measured.json"), "w") as f:
        json.dump(measured, f, indent=1)
    if sampler:
        with open(os.path.join(args.out, f"{tag}.nvml_samples.csv"), "w") as f:
            nr.write_samples_csv(sampler.rows, f)
    ks = [s["kernels"] for s in stats["steps"]]
    busy = [round(s["gpu_busy_ms"], 2) for s in stats["steps"]]
    print(f"{tag}: {n} steps  {measured['time_per_step_s']*1e3:.3f} ms/step  "
          f"{measured['energy_per_step_j']:.3f} J/step  {measured['mean_power_w']:.1f} W  "
          f"SM {measured.get('mean_sm_mhz') or 0:.0f} MHz  reasons {hex(measured.get('clock_event_reasons_mask', 0))}  "
          f"host/step {measured['host_step_s_mean']*1e3:.2f} ms  profiled host {[round(h*1e3, 2) for h in host_prof]} ms  "
          f"kernels/step {ks}  busy {busy} ms  trace {os.path.getsize(kpath)/1e6:.2f} MB  "
          f"{'timing host ' + str([round(h*1e3, 2) for h in timing['host_step_s']]) + ' ms  ' if timing else ''}"
          f"total {time.perf_counter() - t_start:.1f} s", flush=True)
    if any(r is not None and not r["finite"] for r in (after_window, after_profile)):
        print(f"{tag}: WARNING: step() returned NaN or inf (step_result in the measurement): the run "
              "has diverged, and its data draw far less power than real data", flush=True)


if __name__ == "__main__":
    main()
