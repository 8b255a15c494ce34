#!/usr/bin/env python3
"""Tensor-core convolutions alone (validation/h200/ops/run10.sh, run on an
H100: this folder): per capture of FOLDER (default: this folder), the
measured power and the model's time and power errors (`dvfsim hw validate
--json`, the host at the capture's own pairing; device
h200 or h100-sxm by the board's name), with the per-class instruction
estimate and with Nsight Compute's counts of one repetition
(`ncu_<tag>.subset.csv.gz`) as the instruction sidecar, and the count's
ratio to the estimate on the convolution kernels. The streaming controls
(`op_add`, `op_add_end`) say how far the board sits from the model.

  python3 validation/h100/convs/table.py [FOLDER] [--dvfsim build/apps/dvfsim]
"""
import argparse
import csv
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from ncu_utilisation import read_ncu_rows  # noqa: E402
from validation_table import device_of, pct, validate, validate_with_sidecar  # noqa: E402


def errors(dvfsim, stem, device):
    d, error = validate(dvfsim, stem, device=device)
    if d is None:
        sys.exit(f"{stem}: {error}")
    p = d.get("paired") or d["predicted"]
    return d, p


def conv_instructions(dvfsim, stem, tmp):
    """Annotated warp instructions of the trace's fprop/dgrad/wgrad kernels in iteration 1, and their number."""
    out = os.path.join(tmp, "run")
    subprocess.run([dvfsim, "run", "--trace", stem + ".kineto.json.gz", "--device", device_of(stem), "--policy",
                    "native", "--baseline", "none", "--out", out, "--outputs", "summary,kernels", "--no-cache"],
                   check=True, capture_output=True)
    with open(os.path.join(out, "names.csv")) as f:
        names = {r["name_id"]: r["name"] for r in csv.DictReader(f)}
    with open(os.path.join(out, "kernels.csv")) as f:
        convs = [float(r["instructions"]) for r in csv.DictReader(f)
                 if r["iteration"] == "1" and any(p in names[r["name_id"]] for p in ("fprop", "dgrad", "wgrad"))]
    shutil.rmtree(out)
    return sum(convs), len(convs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=HERE)
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    args = ap.parse_args()
    print("| capture | board | measured W | time | power, estimate | power, ncu's counts "
          "| conv. instructions, ncu / estimate |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dvfsim_convs_") as tmp:
        for trace in sorted(glob.glob(os.path.join(args.folder, "op_*.kineto.json.gz"))):
            stem = trace[: -len(".kineto.json.gz")]
            tag = os.path.basename(stem)
            device = device_of(stem)
            d, p = errors(args.dvfsim, stem, device)
            ncu = os.path.join(args.folder, f"ncu_{tag}.subset.csv.gz")
            counted, ratio = "–", "–"
            if os.path.exists(ncu):
                rows = read_ncu_rows(ncu)
                # One repetition was counted; a traced step runs several: every repetition takes the rows.
                q, error = validate_with_sidecar(args.dvfsim, stem, rows, device=device, repeat=64)
                if q is None:
                    sys.exit(f"{stem} with a sidecar: {error}")
                counted = pct((q.get("paired") or q["predicted"])["power_error_pct"])
                convs = [float(r["instructions"]) for r in rows
                         if any(x in r["kernel"] for x in ("fprop", "dgrad", "wgrad"))]
                estimate, n = conv_instructions(args.dvfsim, stem, tmp)
                # per repetition: ncu counted one, the iteration ran n / len(convs)
                ratio = f"{sum(convs) / max(estimate * len(convs) / max(n, 1), 1):.1f}"
            board = d["measured"].get("board_uuid", "?")[:12]
            print(f"| `{tag}` | {device} {board} | {d['measured']['power_w']:.1f} | {pct(p['time_error_pct'])} | "
                  f"{pct(p['power_error_pct'])} | {counted} | {ratio} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
