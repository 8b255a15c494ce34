#!/usr/bin/env python3
"""A captured pipeline job (capture_pipeline.py) against dvfsim's replay of it.

Reads <dir>/<tag>.job.json and every rank's <tag>.rank<r>.kineto.json.gz and
<tag>.rank<r>.measured.json; from each rank's trace, per profiled iteration:

  busy_s    GPU time of its compute work (kernels, memcpy and memset other
            than NCCL's, intervals merged so overlapping streams count once)
  comm_s    GPU time inside NCCL kernels (send/recv waits included)
  span_s    from the iteration's first GPU event to the next iteration's
            first (the last profiled iteration: to its last GPU event)

and the rank's bubble: its unprofiled iteration time (measured.json) less
the traced busy time, the time its GPU did no compute in the measured run.
(The profiled span is not used for it: the profiler stretches the host, so
a traced iteration also idles where the unprofiled one was launch-ahead.)

Then (with --single-trace) runs `dvfsim run --parallel pp=S,microbatches=M`
on a single-GPU trace of one microbatch (capture_gpt3.py --batch = the
job's micro-batch) and prints, per rank and for the job, predicted against
measured time and energy per iteration (measured: the ranks' unprofiled
NVML windows) and dvfsim's busy and bubble against the trace's.

  python3 traces/capture/pipeline_compare.py DIR TAG [--single-trace T]
      [--dvfsim build/apps/dvfsim] [--device h200] [--policy native]
      [--json OUT.json]

Needs only the Python standard library.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kineto_steps  # noqa: E402


def fail(msg):
    print(f"pipeline_compare: {msg}", file=sys.stderr)
    sys.exit(2)


def load_json(path):
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt") as f:
            return json.load(f)
    except FileNotFoundError:
        fail(f"{path}: no such file")
    except (OSError, ValueError) as e:
        fail(f"{path}: not readable JSON ({e})")


def merged_length(intervals):
    """Total length of the union of [a, b) intervals."""
    total, end = 0.0, None
    start = None
    for a, b in sorted(intervals):
        if end is None or a > end:
            if end is not None:
                total += end - start
            start, end = a, b
        elif b > end:
            end = b
    if end is not None:
        total += end - start
    return total


def is_nccl(event):
    return str(event.get("name", "")).lower().startswith("nccl")


def rank_iterations(path):
    """Per profiled iteration of one rank's Kineto trace: busy, comm and span
    (s) and kernel counts; GPU events are given to the iteration whose
    ProfilerStep range holds their launch (correlation id)."""
    try:
        ev = kineto_steps.load_events(path)
    except FileNotFoundError:
        fail(f"{path}: no such file")
    except (OSError, ValueError) as e:
        fail(f"{path}: not a readable Chrome trace ({e})")
    steps = kineto_steps.profiler_steps(ev)
    if not steps:
        fail(f"{path}: no ProfilerStep# ranges (was it written by capture_pipeline.py?)")
    per, _ = kineto_steps.gpu_events_by_step(ev, steps)
    out = []
    for j, mine in enumerate(per):
        if not mine:
            fail(f"{path}: iteration {j} has no GPU events")
        compute = [(e["ts"], e["ts"] + e["dur"]) for e in mine if not is_nccl(e)]
        comm = [(e["ts"], e["ts"] + e["dur"]) for e in mine if is_nccl(e)]
        first = min(e["ts"] for e in mine)
        if j + 1 < len(per) and per[j + 1]:
            end = min(e["ts"] for e in per[j + 1])
        else:
            end = max(e["ts"] + e["dur"] for e in mine)
        out.append({"busy_s": merged_length(compute) / 1e6, "comm_s": merged_length(comm) / 1e6,
                    "span_s": (end - first) / 1e6,
                    "kernels": sum(1 for e in mine if e.get("cat") == "kernel" and not is_nccl(e)),
                    "nccl_kernels": sum(1 for e in mine if is_nccl(e))})
    return out


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def run_dvfsim(args, job):
    out = tempfile.mkdtemp(prefix="pipeline_compare.")
    par = f"pp={job['stages']},microbatches={job['microbatches']},schedule=1f1b"
    cmd = [args.dvfsim, "run", "--trace", args.single_trace, "--device", args.device,
           "--policy", args.policy, "--parallel", par, "--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr.strip()}")
    return load_json(os.path.join(out, "summary.json")), " ".join(cmd)


def pct(pred, meas):
    return f"{(pred / meas - 1) * 100:+.2f} %" if meas else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("tag")
    ap.add_argument("--single-trace", help="single-GPU Kineto trace of one microbatch")
    ap.add_argument("--dvfsim", default="build/apps/dvfsim")
    ap.add_argument("--device", default="h200")
    ap.add_argument("--policy", default="native")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    job = load_json(os.path.join(args.dir, f"{args.tag}.job.json"))
    S = job.get("stages")
    if not isinstance(S, int) or S < 1:
        fail(f"{args.tag}.job.json: field 'stages' missing or not a positive integer")
    ranks = []
    for r in range(S):
        mpath = os.path.join(args.dir, f"{args.tag}.rank{r}.measured.json")
        meas = load_json(mpath)
        if not isinstance(meas.get("time_per_step_s"), (int, float)) or meas["time_per_step_s"] <= 0:
            fail(f"{mpath}: field 'time_per_step_s' missing or not a positive number")
        its = rank_iterations(os.path.join(args.dir, f"{args.tag}.rank{r}.kineto.json.gz"))
        ranks.append({"rank": r, "measured": meas, "iterations": its,
                      "busy_s": mean([i["busy_s"] for i in its]),
                      "bubble_s": meas["time_per_step_s"] - mean([i["busy_s"] for i in its]),
                      "comm_s": mean([i["comm_s"] for i in its]),
                      "span_s": mean([i["span_s"] for i in its])})
    result = {"tag": args.tag, "stages": S, "microbatches": job.get("microbatches"),
              "shared_gpu": job.get("shared_gpu"), "ranks": [], "job": {}}
    pred = None
    if args.single_trace:
        pred, cmd = run_dvfsim(args, job)
        result["dvfsim_command"] = cmd
        per_gpu = {g["rank"]: g for g in pred.get("per_gpu", [])}
        if len(per_gpu) != S:
            fail(f"dvfsim reported {len(per_gpu)} GPUs for pp={S}")

    if job.get("shared_gpu"):
        print("note: the ranks shared one GPU (--share-gpu): a test of the schedule and the "
              "files; times and energies are not a pipeline's")
    print(f"{args.tag}: S={S}, M={job.get('microbatches')}, measured "
          f"{job['time_per_iteration_s'] * 1e3:.2f} ms and "
          f"{job['energy_per_iteration_j'] or float('nan'):.2f} J per iteration")
    head = ("| rank | time measured | energy measured | busy (trace) | bubble (trace) | comm (trace)"
            + (" | time predicted | energy predicted | error | busy predicted | error | bubble predicted | error"
               if pred else "") + " |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    t_pred = pred["time_per_iteration_s"] if pred else None
    for rk in ranks:
        m = rk["measured"]
        e = m.get("energy_per_step_j")
        row = {"rank": rk["rank"], "time_measured_s": m.get("time_per_step_s"),
               "energy_measured_j": e, "busy_trace_s": rk["busy_s"],
               "bubble_trace_s": rk["bubble_s"], "comm_trace_s": rk["comm_s"],
               "iterations": rk["iterations"]}
        cells = [str(rk["rank"]), f"{m['time_per_step_s'] * 1e3:.2f} ms",
                 f"{e:.2f} J" if e is not None else "–", f"{rk['busy_s'] * 1e3:.2f} ms",
                 f"{rk['bubble_s'] * 1e3:.2f} ms", f"{rk['comm_s'] * 1e3:.2f} ms"]
        if pred:
            g = per_gpu[rk["rank"]]
            bubble = t_pred - g["busy_s"]
            row.update({"energy_predicted_j": g["energy_j"], "busy_predicted_s": g["busy_s"],
                        "bubble_predicted_s": bubble})
            cells += [f"{t_pred * 1e3:.2f} ms", f"{g['energy_j']:.2f} J",
                      pct(g["energy_j"], e) if e else "–", f"{g['busy_s'] * 1e3:.2f} ms",
                      pct(g["busy_s"], rk["busy_s"]), f"{bubble * 1e3:.2f} ms",
                      pct(bubble, rk["bubble_s"]) if rk["bubble_s"] > 0 else "n/a"]
        result["ranks"].append(row)
        print("| " + " | ".join(cells) + " |")
    result["job"] = {"time_measured_s": job["time_per_iteration_s"],
                     "energy_measured_j": job["energy_per_iteration_j"]}
    if pred:
        result["job"].update({"time_predicted_s": t_pred,
                              "energy_predicted_j": pred["energy_per_iteration_j"]})
        print(f"job: time {t_pred * 1e3:.2f} ms predicted, "
              f"{job['time_per_iteration_s'] * 1e3:.2f} ms measured "
              f"({pct(t_pred, job['time_per_iteration_s'])}); energy "
              f"{pred['energy_per_iteration_j']:.2f} J predicted"
              + (f", {job['energy_per_iteration_j']:.2f} J measured "
                 f"({pct(pred['energy_per_iteration_j'], job['energy_per_iteration_j'])})"
                 if job.get("energy_per_iteration_j") else ""))
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
