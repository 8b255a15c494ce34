#!/usr/bin/env python3
"""Does the pipe mix say what one SIMT price per warp instruction misses?
(docs/calibration.md, "One price per warp instruction, by pipe".)

For every operator of this folder that Nsight Compute counted per pipe
(run.sh, run2.sh: ncu_op_<tag>.subset.csv.gz with the pipe_* columns of
traces/capture/ncu_reduce.py, one repetition) and whose power an H100 call
measured alone (the folders validation/h100/families/table.py reads), one
Markdown row: the share of warp instructions on each
pipe (they need not add to 1: the other pipes are not counted), the
annotation's instructions and DRAM bytes over Nsight Compute's, L2 traffic
over DRAM bytes (Nsight Compute), the measured power, the model's power
scaled by its folder's streaming control (measured over modelled for
`op_add` and `op_add_end`, the board's own offset), and their difference.

Then, on the operators whose instruction count the annotation gets within
10 %: a price per pipe (extra watts per 10^9 warp instructions a second on
FMA, ALU, LSU and the other pipes, least squares on the difference) and the
same fitted leaving each operator out in turn; the root-mean-square
difference before, fitted, and held out.

  python3 validation/h200/pipes/mix.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import csv
import glob
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validation_table import validate  # noqa: E402

PIPES = ("fma", "alu", "xu", "lsu", "uniform")
sys.path.insert(0, os.path.join(ROOT, "validation/h100/families"))
from table import FOLDERS  # noqa: E402  (the H100 operator calls, each with its control)

H100 = [folder for folder, _ in FOLDERS]
CONTROLS = ("add", "add_end")


def ncu_rows(tag):
    path = os.path.join(HERE, f"ncu_op_{tag}.subset.csv.gz")
    if not os.path.exists(path):
        return None
    with gzip.open(path, "rt") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return rows if rows and "pipe_fma" in rows[0] else None


def total(rows, *cols):
    return sum(float(r[c] or 0) for r in rows for c in cols)


def model_kernels(dvfsim, trace, out):
    """The model's kernels of the second traced step (the first may hold the
    profiler's start)."""
    subprocess.run([dvfsim, "run", "--trace", trace, "--device", "h100-sxm", "--policy", "native", "--out", out],
                   check=True, capture_output=True)
    with open(os.path.join(out, "kernels.csv")) as f:
        return [r for r in csv.DictReader(f) if r["iteration"] == "1"]


def operators(dvfsim, tmp):
    for folder in H100:
        res = {}
        for trace in sorted(glob.glob(os.path.join(folder, "op_*.kineto.json.gz"))):
            stem = trace[: -len(".kineto.json.gz")]
            d, error = validate(dvfsim, stem, device="h100-sxm")
            if d is None:
                raise SystemExit(f"{stem}: {error}")
            res[os.path.basename(stem)[3:]] = (trace, d)
        ratio = [res[k][1]["measured"]["power_w"] / (res[k][1].get("paired") or res[k][1]["predicted"])["power_w"]
                 for k in CONTROLS if k in res]
        control = sum(ratio) / len(ratio)
        for tag, (trace, d) in res.items():
            rows = ncu_rows(tag)
            if tag in CONTROLS or rows is None:
                continue
            ks = model_kernels(dvfsim, trace, os.path.join(tmp, tag))
            reps = len(ks) / len(rows)  # repetitions per traced step
            step_s = d["measured"]["time_per_iteration_s"]
            inst = total(rows, "instructions")
            dram = total(rows, "dram_read_bytes", "dram_write_bytes")
            yield {
                "tag": tag,
                "share": {p: total(rows, f"pipe_{p}") / inst for p in PIPES},
                "rate": {p: total(rows, f"pipe_{p}") * reps / step_s for p in PIPES},
                "inst_rate": inst * reps / step_s,
                "inst_ratio": sum(float(k["instructions"]) for k in ks) / reps / inst,
                "dram_ratio": sum(float(k["dram_bytes"]) for k in ks) / reps / dram,
                "l2_per_dram": total(rows, "l2_bytes") / dram,
                "measured_w": d["measured"]["power_w"],
                "model_w": (d.get("paired") or d["predicted"])["power_w"] * control,
            }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ops = list(operators(args.dvfsim, tmp))
    print("| operator | " + " | ".join(PIPES) + " | instructions, annotation / ncu | DRAM bytes, annotation / ncu "
          "| L2 / DRAM bytes (ncu) | measured W | model W × control | difference |")
    print("|---|" + "---|" * (len(PIPES) + 6))
    for o in ops:
        shares = " | ".join(f"{o['share'][p]:.2f}" for p in PIPES)
        print(f"| `{o['tag']}` | {shares} | {o['inst_ratio']:.2f} | {o['dram_ratio']:.2f} | {o['l2_per_dram']:.1f} | "
              f"{o['measured_w']:.1f} | {o['model_w']:.1f} | {o['measured_w'] - o['model_w']:+.1f} |")

    sel = [o for o in ops if 0.9 <= o["inst_ratio"] <= 1.1]
    diff = np.array([o["measured_w"] - o["model_w"] for o in sel])
    main_pipes = ("fma", "alu", "lsu")
    x = np.array([[o["rate"][p] / 1e9 for p in main_pipes]
                  + [(o["inst_rate"] - sum(o["rate"][p] for p in main_pipes)) / 1e9] for o in sel])
    c = np.linalg.lstsq(x, diff, rcond=None)[0]
    held = []
    for i in range(len(sel)):
        keep = np.arange(len(sel)) != i
        ci = np.linalg.lstsq(x[keep], diff[keep], rcond=None)[0]
        held.append(diff[i] - x[i] @ ci)
    held = np.array(held)
    rms = lambda v: float(np.sqrt(np.mean(v ** 2)))  # noqa: E731
    print()
    print(f"{len(sel)} operators with instructions within 10 %: " + ", ".join(o["tag"] for o in sel))
    for p in PIPES:
        r = np.corrcoef(diff, [o["share"][p] for o in sel])[0, 1]
        print(f"  correlation of the difference with the {p} share: {r:+.2f}")
    print(f"  price per pipe (W per 1e9 warp instructions/s; FMA, ALU, LSU, other): "
          + ", ".join(f"{v:+.3f}" for v in c))
    print(f"  rms difference: {rms(diff):.1f} W as modelled, {rms(diff - x @ c):.1f} W fitted, "
          f"{rms(held):.1f} W held out (leave one out)")
    for o, d, h in zip(sel, diff, held):
        print(f"    {o['tag']:16s} {d:+7.1f} W -> held out {h:+7.1f} W")
    return 0


if __name__ == "__main__":
    sys.exit(main())
