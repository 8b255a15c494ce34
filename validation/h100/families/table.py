#!/usr/bin/env python3
"""The kernel-family sweeps of docs/calibration.md ("Kernels that hold few
warps") and docs/validation.md ("The 3-D U-Net's families alone"): `dvfsim
hw validate --device h100-sxm --json` on every capture of this folder
(run7.sh: NCHW batch norm at 16-512 channels, the GNN's scatter and gather,
four networks), of norms/ (run8.sh: channels-last batch norm, layer norm
and group norm at several grids), of ../heldout19/ (the 3-D U-Net's
batch norm, upsampling and convolutions at its shapes) and of ../heldout21/
(2-D upsampling in three modes and two layouts, roll) and of ops/
(ops/run.sh: max pooling, depthwise and 1x1 convolutions, a layout copy and
a VGG convolution, operators the H200 had measured alone), one Markdown row
each: the measured power, and the model's time and power errors with the
host at the capture's own pairing (the GPU and power models' error); each
folder's streaming control (`op_add`, `op_add_end`) says how far its board
sits from the model on a kernel the calibration prices, and the last column
is the power error less the mean of that folder's controls.

  python3 validation/h100/families/table.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validation_table import pct, validate  # noqa: E402

FOLDERS = ((HERE, "7"), (os.path.join(HERE, "norms"), "8"), (os.path.join(HERE, "..", "heldout19"), "19"),
           (os.path.join(HERE, "..", "heldout21"), "21"), (os.path.join(HERE, "ops"), "12-07"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    args = ap.parse_args()
    print("| capture | call (board) | measured W | time | power | power less the control's |")
    print("|---|---|---|---|---|---|")
    for folder, call in FOLDERS:
        rows = []
        for trace in sorted(glob.glob(os.path.join(folder, "*.kineto.json.gz"))):
            stem = trace[: -len(".kineto.json.gz")]
            d, error = validate(args.dvfsim, stem, device="h100-sxm")
            if d is None:
                print(f"{os.path.basename(stem)}: {error}", file=sys.stderr)
                return 1
            rows.append((os.path.basename(stem), d, d.get("paired") or d["predicted"]))
        controls = [p["power_error_pct"] for name, _, p in rows if name in ("op_add", "op_add_end")]
        control = sum(controls) / len(controls)
        for name, d, p in rows:
            board = d["measured"].get("board_uuid", "?")[:12]
            print(f"| `{name}` | {call} ({board}) | {d['measured']['power_w']:.1f} | "
                  f"{pct(p['time_error_pct'])} | {pct(p['power_error_pct'])} | "
                  f"{pct(p['power_error_pct'] - control)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
