#!/usr/bin/env python3
"""Reference results of the small experiments (experiments/small/*.yaml).

  scripts/golden.py --check       run every small experiment, compare its
                                  results.csv with experiments/golden/NAME.csv
  scripts/golden.py --regenerate  run them and rewrite experiments/golden/

Options: --dvfsim PATH (default build/apps/dvfsim), --jobs N (default 2),
--only NAME (one experiment). Rows are matched by run_id. Tolerances per
column (TOLERANCES below): identity, parameter and count columns must match
exactly; times, energies and powers within a relative 1e-6; the two
headline percentages within 0.001 percentage points. A column or row that
appears or disappears is a difference too. Exit 1 on any difference, with
one line per differing cell. After a change that moves a number on purpose,
regenerate and say why in the commit message.
"""
import argparse
import csv
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SMALL = ROOT / "experiments" / "small"
GOLDEN = ROOT / "experiments" / "golden"

# (kind, tolerance): "exact" string equality; "rel" |a-b| <= tol*max(|a|,|b|)
# (+1e-12 absolute); "abs" |a-b| <= tol.
TOLERANCES = {
    "energy_saving_pct": ("abs", 1e-3),
    "slowdown_pct": ("abs", 1e-3),
}
REL = ("rel", 1e-6)
RELATIVE_COLUMNS = {
    "time_s", "energy_j", "avg_power_w", "time_per_iteration_s", "energy_per_iteration_j",
    "switch_stall_s", "off_target_s", "power_capped_s",
    "baseline_time_s", "baseline_energy_j", "baseline_avg_power_w",
    "baseline_time_per_iteration_s", "baseline_energy_per_iteration_j",
}


def tolerance(column):
    if column in TOLERANCES:
        return TOLERANCES[column]
    if column in RELATIVE_COLUMNS:
        return REL
    return ("exact", 0.0)


def same(column, a, b):
    kind, tol = tolerance(column)
    if kind == "exact" or a == b:
        return a == b
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return False
    if kind == "abs":
        return abs(x - y) <= tol
    return abs(x - y) <= tol * max(abs(x), abs(y)) + 1e-12


def read(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames or [], {row["run_id"]: row for row in r}


def compare(name, golden_path, new_path):
    gcols, grows = read(golden_path)
    ncols, nrows = read(new_path)
    problems = []
    for c in gcols:
        if c not in ncols:
            problems.append(f"{name}: column '{c}' disappeared")
    for c in ncols:
        if c not in gcols:
            problems.append(f"{name}: new column '{c}'")
    for rid in grows:
        if rid not in nrows:
            problems.append(f"{name}: run {rid} disappeared")
    for rid in nrows:
        if rid not in grows:
            problems.append(f"{name}: new run {rid}")
    for rid, g in grows.items():
        n = nrows.get(rid)
        if n is None:
            continue
        for c in gcols:
            if c in n and not same(c, g[c], n[c]):
                kind, tol = tolerance(c)
                problems.append(f"{name}: {rid}: {c}: golden {g[c]!r}, now {n[c]!r} "
                                f"(tolerance {kind}{'' if kind == 'exact' else ' ' + str(tol)})")
    return problems


def run(exe, experiment, out, jobs):
    cmd = [str(exe), "sweep", str(experiment), "--out", str(out), "--jobs", str(jobs), "--no-progress"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit(f"golden: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}")
    return out / "results.csv"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--regenerate", action="store_true")
    ap.add_argument("--dvfsim", default=str(ROOT / "build" / "apps" / "dvfsim"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only")
    a = ap.parse_args()
    experiments = sorted(SMALL.glob("*.yaml"))
    if a.only:
        experiments = [e for e in experiments if e.stem == a.only]
        if not experiments:
            sys.exit(f"golden: no experiments/small/{a.only}.yaml")
    problems = []
    with tempfile.TemporaryDirectory(prefix="dvfsim-golden-") as tmp:
        for e in experiments:
            results = run(a.dvfsim, e, pathlib.Path(tmp) / e.stem, a.jobs)
            golden = GOLDEN / f"{e.stem}.csv"
            if a.regenerate:
                GOLDEN.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(results, golden)
                print(f"golden: wrote {golden.relative_to(ROOT)}")
            elif not golden.exists():
                problems.append(f"{e.stem}: no {golden.relative_to(ROOT)} (run scripts/golden.py --regenerate)")
            else:
                found = compare(e.stem, golden, results)
                print(f"golden: {e.stem}: {'ok' if not found else f'{len(found)} differences'}")
                problems += found
    for p in problems:
        print(p)
    if problems:
        print("golden: results moved; if on purpose: scripts/golden.py --regenerate, and say why in the commit")
        sys.exit(1)


if __name__ == "__main__":
    main()
