#!/usr/bin/env python3
"""Why HBM GPUs save so little per kernel (issue 20, deliverable 5).

Runs experiments/hbm_breakdown.yaml (kernel-oracle, free switches, memory per
kernel or fixed, budgets 0/1/2/5 %), then the kernel oracle at 0 % on
counterfactual copies of each device file (no L2 floor, no overlap term, both,
no power cap; written under OUT/devices/, never into models/), and a static
core-clock sweep (the model's core-clock sensitivity per kernel class), and
prints the markdown tables of docs/policies.md, "Why HBM GPUs save little per
kernel".

    nice -n 10 python3 experiments/hbm_breakdown.py [--out results/hbm_breakdown] [--dvfsim build/apps/dvfsim]

Runs already done are reused (sweep resume; `run` outputs with a summary.json).
"""
import argparse
import collections
import csv
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = "traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz"
DEVICES = ["rtx3080ti", "h200", "a100-sxm", "b200"]
MEMORY_BOUND = ["elementwise", "norm", "reduction", "optimizer"]

# name -> (description, [(regex on the device YAML, replacement)])
VARIANTS = {
    "no-l2-floor": ("L2 floor removed (l2_bytes_per_clock = 1e6)",
                    [(r"(\n  l2_bytes_per_clock: \{value: )[0-9.eE+-]+", r"\g<1>1000000")]),
    "no-overlap": ("overlap term removed (kappa = 0)",
                   [(r"(\n  kappa: \{value: )[0-9.eE+-]+", r"\g<1>0")]),
    "no-l2-no-overlap": ("both removed: memory-bound kernels blind to the core clock",
                         [(r"(\n  l2_bytes_per_clock: \{value: )[0-9.eE+-]+", r"\g<1>1000000"),
                          (r"(\n  kappa: \{value: )[0-9.eE+-]+", r"\g<1>0")]),
    "no-power-cap": ("power limit raised to 5000 W (the cap never binds)",
                     [(r"(\n  limit_w: \{value: )[0-9.eE+-]+", r"\g<1>5000"),
                      (r"(\n  limit_max_w: \{value: )[0-9.eE+-]+", r"\g<1>5000")]),
}


def run(cmd):
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def dvfsim_run(dvfsim, out, device, policy, sets):
    if not os.path.exists(os.path.join(ROOT, out, "summary.json")):
        cmd = [dvfsim, "run", "--trace", TRACE, "--device", device, "--policy", policy, "--out", out]
        for key, value in sets.items():
            cmd += ["--set", f"{key}={value}"]
        run(cmd)
    return out


def summary(run_dir):
    with open(os.path.join(ROOT, run_dir, "summary.json")) as f:
        return json.load(f)


def per_class(run_dir):
    """class -> [policy energy J, baseline energy J, policy time ns, baseline time ns]."""
    out = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    with open(os.path.join(ROOT, run_dir, "kernels.csv")) as f:
        for row in csv.DictReader(f):
            a = out[row["class"]]
            a[0] += float(row["energy_j"])
            a[1] += float(row["baseline_energy_j"])
            a[2] += float(row["duration_ns"])
            a[3] += float(row["baseline_duration_ns"])
    return out


def core_clocks(text):
    m = re.search(r"\n  core_mhz: \{min: (\d+), max: (\d+), step: (\d+)", text)
    lo, hi, step = (int(x) for x in m.groups())
    return list(range(lo, hi + 1, step))


def nearest(clocks, target):
    return min(clocks, key=lambda c: abs(c - target))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/hbm_breakdown")
    ap.add_argument("--dvfsim", default="build/apps/dvfsim")
    ap.add_argument("--jobs", default="2")
    a = ap.parse_args()
    out = a.out

    # 1. The sweep: devices x memory mode x budget.
    run([a.dvfsim, "sweep", "experiments/hbm_breakdown.yaml", "--out", out, "--jobs", a.jobs,
         "--full-outputs"])  # per_class reads each run's kernels.csv
    with open(os.path.join(ROOT, out, "results.csv")) as f:
        sweep = list(csv.DictReader(f))
    for r in sweep:  # run_dir is relative to the sweep's output directory
        r["run_dir"] = os.path.join(out, r["run_dir"])
    cell = {(r["device"], r["memory"], float(r["max_slowdown"])): r for r in sweep}

    print("### Saving by budget (kernel-oracle, global, free switches; energy saving % / slowdown %)\n")
    print("| device | memory clock | 0 % | 1 % | 2 % | 5 % |")
    print("|---|---|---|---|---|---|")
    for d in DEVICES:
        for mem in ["auto", "fixed"]:
            cells = []
            for b in [0.0, 1.0, 2.0, 5.0]:
                r = cell[(d, mem, b)]
                cells.append(f"{float(r['energy_saving_pct']):.2f} / {float(r['slowdown_pct']):+.2f}")
            label = "per kernel" if mem == "auto" else "fixed"
            print(f"| {d} | {label} | " + " | ".join(cells) + " |")

    # 2. Per kernel class at 0 % and 5 %: the class's saving as % of the whole
    # baseline energy (idle and gaps included in the denominator).
    print("\n### Per kernel class (memory per kernel): saving in % of the whole run's baseline energy\n")
    classes = ["gemm", "attention", "conv", *MEMORY_BOUND, "memset", "other"]
    print("| device | budget | " + " | ".join(classes) + " | total | baseline energy share of memory-bound classes |")
    print("|---|---|" + "---|" * (len(classes) + 2))
    for d in DEVICES:
        for b in [0.0, 5.0]:
            r = cell[(d, "auto", b)]
            pc = per_class(r["run_dir"])
            base_total = float(r["baseline_energy_j"])
            cells = [f"{(pc[c][1] - pc[c][0]) / base_total * 100:.2f}" if c in pc else "–"
                     for c in classes]
            mb_share = sum(pc[c][1] for c in MEMORY_BOUND if c in pc) / base_total * 100
            print(f"| {d} | {b:g} % | " + " | ".join(cells) +
                  f" | {float(r['energy_saving_pct']):.2f} | {mb_share:.1f} % |")

    # 3. Counterfactual device files at 0 %: what blocks the saving.
    print("\n### What blocks it: kernel-oracle at 0 %, counterfactual device files (saving %)\n")
    print("| device | shipped | " + " | ".join(VARIANTS) + " |")
    print("|---|---|" + "---|" * len(VARIANTS))
    os.makedirs(os.path.join(ROOT, out, "devices"), exist_ok=True)
    for d in DEVICES:
        with open(os.path.join(ROOT, "models", "devices", d + ".yaml")) as f:
            text = f.read()
        cells = [f"{float(cell[(d, 'auto', 0.0)]['energy_saving_pct']):.2f}"]
        for name, (_, subs) in VARIANTS.items():
            variant = text
            for pattern, repl in subs:
                variant, n = re.subn(pattern, repl, variant)
                if n != 1:
                    raise SystemExit(f"{d}.yaml: pattern {pattern} matched {n} times")
            path = os.path.join(out, "devices", f"{d}-{name}.yaml")
            with open(os.path.join(ROOT, path), "w") as f:
                f.write(variant)
            rd = dvfsim_run(a.dvfsim, os.path.join(out, "variants", f"{d}-{name}"), path,
                            "kernel-oracle", {"switch_latency_us": 0, "max_slowdown": 0})
            cells.append(f"{summary(rd)['energy_saving_pct']:.2f}")
        print(f"| {d} | " + " | ".join(cells) + " |")
    for name, (desc, _) in VARIANTS.items():
        print(f"- `{name}`: {desc}")

    # 4. The model's core-clock sensitivity: static runs at the default memory
    # clock, time and energy of each class relative to the top core clock.
    print("\n### The model's core-clock sensitivity (static clocks, default memory clock)\n")
    print("| device | core MHz (fraction of top) | memory-bound time | memory-bound energy | GEMM time | GEMM energy |")
    print("|---|---|---|---|---|---|")
    for d in DEVICES:
        with open(os.path.join(ROOT, "models", "devices", d + ".yaml")) as f:
            clocks = core_clocks(f.read())
        top = clocks[-1]
        ref = None
        for frac in [1.0, 0.75, 0.5, 0.35]:
            mhz = nearest(clocks, top * frac)
            rd = dvfsim_run(a.dvfsim, os.path.join(out, "static", f"{d}-{mhz}"), d, "static",
                            {"core_mhz": mhz})
            pc = per_class(rd)
            mb = [sum(pc[c][i] for c in MEMORY_BOUND if c in pc) for i in range(4)]
            gm = pc["gemm"]
            if ref is None:
                ref = (mb, gm)
            print(f"| {d} | {mhz} ({mhz / top:.2f}) | {mb[2] / ref[0][2]:.3f} | {mb[0] / ref[0][0]:.3f} "
                  f"| {gm[2] / ref[1][2]:.3f} | {gm[0] / ref[1][0]:.3f} |")


if __name__ == "__main__":
    main()
