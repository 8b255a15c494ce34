#!/usr/bin/env python3
"""The 3-D U-Net's kernel families alone on an H100 (run by
validation/h200/heldout19/run.sh; docs/validation.md, "The 3-D U-Net's
families alone"): `dvfsim hw validate --device h100-sxm --json` on every
capture of this folder, one Markdown row each: the measured power, the
model's time and power errors with the host at the capture's own pairing
(the GPU and power models' error), and the power error less the streaming
control's (`op_add`, `op_add_end`: how far this board sits from the model on
the kernel the calibration prices).

  python3 validation/h100/heldout19/table.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validation_table import pct, validate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    args = ap.parse_args()
    rows = []
    for trace in sorted(glob.glob(os.path.join(HERE, "*.kineto.json.gz"))):
        stem = trace[: -len(".kineto.json.gz")]
        d, error = validate(args.dvfsim, stem, device="h100-sxm")
        if d is None:
            print(f"{os.path.basename(stem)}: {error}", file=sys.stderr)
            return 1
        rows.append((os.path.basename(stem), d))
    controls = [d for name, d in rows if name in ("op_add", "op_add_end")]
    control = sum((d.get("paired") or d["predicted"])["power_error_pct"] for d in controls) / len(controls)
    print("| capture | measured W | time | power | power less the control's |")
    print("|---|---|---|---|---|")
    for name, d in rows:
        p = d.get("paired") or d["predicted"]
        print(f"| `{name}` | {d['measured']['power_w']:.1f} | {pct(p['time_error_pct'])} | "
              f"{pct(p['power_error_pct'])} | {pct(p['power_error_pct'] - control)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
