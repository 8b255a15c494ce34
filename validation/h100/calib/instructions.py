#!/usr/bin/env python3
"""Give the H100 calibration rows (measurements.csv here) their warp
instruction counts, which Nsight Compute did not count on this board: the
H200's count per launch of the same benchmark
(models/calibration/h200/measurements.csv, `ncu_instmix.py`) times this row's
launches.

Why that is the same number: both boards ran microbench.py's default suite
with the same PyTorch (2.11.0+cu130), on the same compute capability (9.0)
and SM count (132), over the same tensor sizes (their DRAM bytes and FLOPs
per launch agree to 0.1 %, checked below), so every launch executes the same
SASS over the same grid. Rows without a count on the H200 (idle, copies) get
0. Without the counts `dvfsim calibrate` falls back on its per-class
estimate, which puts the elementwise rows 24 % high (axpy) to 22 % low
(layer norm) on h100-sxm.yaml's coefficients (docs/calibration.md, "The H100's
own coefficients").

  python3 validation/h100/calib/instructions.py [--check] [CSV]

Rewrites CSV (default: measurements.csv here; any H100 run of the default
suite, e.g. validation/h100/heldout10/calib/measurements.csv) in place: its
`instructions` column and the `source` of each row it fills. --check only
verifies that the file already holds these counts.
"""
import argparse
import csv
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
H200 = os.path.join(ROOT, "models/calibration/h200/measurements.csv")
H100 = os.path.join(HERE, "measurements.csv")
NOTE = ("instructions: the H200's Nsight Compute count per launch "
        "(models/calibration/h200/measurements.csv) x launches, same kernels and sizes")


def per_launch(row, column):
    return float(row[column]) / float(row["launches"])


def filled(path):
    """The rows and header of the H100 CSV `path` with the counts filled in."""
    with open(H200) as f:
        h200 = {r["name"]: r for r in csv.DictReader(f)}
    with open(path) as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames)
        rows = list(reader)
    if "instructions" not in fields:
        fields.append("instructions")
    for r in rows:
        twin = h200.get(r["name"])
        launches = float(r["launches"])
        if twin is None or launches == 0 or float(twin["launches"]) == 0:
            r["instructions"] = "0"
            continue
        for column in ("dram_bytes", "flops"):
            a, b = per_launch(r, column), per_launch(twin, column)
            if abs(a - b) > 1e-3 * max(a, b):
                sys.exit(f"{path}: row {r['name']}: {column} per launch {a:.6g} against the "
                         f"H200's {b:.6g}: not the same benchmark, no count to carry over")
        r["instructions"] = f"{per_launch(twin, 'instructions') * launches:.6g}"
        if NOTE not in r["source"]:
            r["source"] = f"{r['source']}; {NOTE}"
    return fields, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("csv", nargs="?", default=H100)
    args = ap.parse_args()
    fields, rows = filled(args.csv)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    with open(args.csv) as f:
        current = f.read()
    if args.check:
        if current != out.getvalue():
            print(f"{args.csv}: its instruction counts are not the H200's per launch; run "
                  f"{os.path.relpath(__file__, ROOT)}", file=sys.stderr)
            return 1
        return 0
    tmp = args.csv + ".tmp"
    with open(tmp, "w") as f:
        f.write(out.getvalue())
    os.replace(tmp, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
