#!/usr/bin/env python3
"""Fits the power model's L2 term, `l2_excess_w_per_v2ghz` (docs/calibration.md,
"L2 traffic of layout-changing copies"), on the layout-changing copies of
call 1 (`to_nhwc`, `to_nchw`), and prints the held-out operators (`cat` of
call 1, all three of call 3 on another board) with and without it.

The term is linear in its coefficient: each capture is replayed with the
coefficient at 0 and at 100 (copies of models/devices/h200.yaml), and the
coefficient is the least-squares solution that zeroes the fit captures'
relative power errors.

  python3 validation/h200/ops/fit_l2_excess.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import os
import re
import tempfile

from table import HERE, ROOT, validate

FIT = [("1", "to_nhwc"), ("1", "to_nchw")]
HELD_OUT = [("1", "cat"), ("repeat", "to_nhwc"), ("repeat", "to_nchw"), ("repeat", "cat")]
KEY = "l2_excess_w_per_v2ghz"


def device_with(tmp, value):
    with open(os.path.join(ROOT, "models", "devices", "h200.yaml")) as f:
        text = f.read()
    line = f'  {KEY}: {{value: {value}, source: "assumption: fit_l2_excess.py trial"}}'
    text, n = re.subn(rf"^  {KEY}:.*$", line, text, flags=re.M)
    if n != 1:
        raise SystemExit(f"fit_l2_excess: models/devices/h200.yaml has no single '{KEY}' line")
    path = os.path.join(tmp, f"h200_{value}.yaml")
    with open(path, "w") as f:
        f.write(text)
    return path


def power_error(dvfsim, device, folder, op):
    stem = os.path.join(HERE if folder == "1" else os.path.join(HERE, folder), f"op_{op}")
    r = validate(dvfsim, stem + ".kineto.json.gz", stem + ".measured.json", device)
    return r["paired"]["power_error_pct"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        zero, hundred = device_with(tmp, 0.0), device_with(tmp, 100.0)
        rows = {}
        for case in FIT + HELD_OUT:
            e0 = power_error(args.dvfsim, zero, *case)
            rows[case] = (e0, (power_error(args.dvfsim, hundred, *case) - e0) / 100.0)
    num = -sum(rows[c][0] * rows[c][1] for c in FIT)
    den = sum(rows[c][1] ** 2 for c in FIT)
    coef = num / den
    print(f"{KEY} = {coef:.1f} (least squares on {', '.join(f'{o} ({s})' for s, o in FIT)})")
    print("| operator | set | power error without | with the term |")
    print("|---|---|---|---|")
    for case in FIT + HELD_OUT:
        e0, slope = rows[case]
        tag = "fit" if case in FIT else "held out"
        print(f"| `{case[1]}` ({tag}) | {case[0]} | {e0:+.1f} % | {e0 + slope * coef:+.1f} % |"
              .replace("-", "−"))


if __name__ == "__main__":
    main()
