#!/usr/bin/env python3
"""The convolutions' own energy in an operator capture, implied and modelled
(docs/validation.md, "Instructions of the tensor-core convolutions", "The
width sweep").

Per capture of FOLDER (default: this folder) that has Nsight Compute rows
(`ncu_<tag>.subset.csv.gz`, one repetition): the step is replayed on its
board's device file (`dvfsim run`, host as traced: these steps are
GPU-bound) with the per-class instruction estimate and with ncu's counts.
The energy of the step's other kernels (cuDNN's layout transforms, the
backward's elementwise kernels: streaming kernels) is taken as modelled,
scaled by the board's streaming control (`--control`: its power error as a
fraction, e.g. 0.178 for +17.8 %), and the rest of the measured step energy
is the convolutions' (fprop, dgrad, wgrad kernels), against which both
replays' convolution energy is compared (since 2026-12-06 both include the
L2 traffic the model estimates from the kernels' tiles,
`conv_l2_bytes_per_flop` in traces/annotate.h). Then ncu's L2 bytes per FLOP of the
convolution kernels (FLOPs from the annotation) and, priced at the board's
device file's price of L2 traffic beyond streaming (`l2_excess_w_per_v2ghz`
over `l2_bytes_per_clock` at 1 V: 23.5 pJ per byte, fitted on copies), the
energy of the L2 traffic beyond a GEMM's bytes per FLOP.

  python3 validation/h100/convwidth/conv_energy.py [FOLDER] --control 0.178
"""
import argparse
import contextlib
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from ncu_utilisation import GEMM_L2_BYTES_PER_FLOP, l2_excess_joules_per_byte, read_ncu_rows  # noqa: E402
from validation_table import device_of, pct, sidecar_copy  # noqa: E402

CONV = re.compile(r"fprop|dgrad|wgrad")


def replay(dvfsim, stem, device, rows, reps, tmp):
    """Iteration 1's kernels (dicts of kernels.csv, with their names) of the capture replayed with
    `rows` as the instruction sidecar, repeated once per repetition (None: the estimate)."""
    out = os.path.join(tempfile.mkdtemp(dir=tmp), "out")
    with contextlib.ExitStack() as stack:
        if rows:
            stem = stack.enter_context(sidecar_copy(stem, rows, reps))
        subprocess.run([dvfsim, "run", "--trace", stem + ".kineto.json.gz", "--device", device, "--policy", "native",
                        "--baseline", "none", "--out", out, "--outputs", "summary,kernels", "--no-cache", "--set",
                        "host_overhead=off"], check=True, capture_output=True)
    with open(os.path.join(out, "names.csv")) as f:
        names = {r["name_id"]: r["name"] for r in csv.DictReader(f)}
    with open(os.path.join(out, "kernels.csv")) as f:
        return [dict(r, name=names[r["name_id"]]) for r in csv.DictReader(f) if r["iteration"] == "1"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=HERE)
    ap.add_argument("--control", type=float, required=True,
                    help="the board's streaming control's power error, as a fraction")
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    args = ap.parse_args()
    print("| capture | measured W (MHz) | convolutions' share of the step | implied convolution energy | "
          "modelled: estimate | ncu's counts | L2 B/FLOP | L2 beyond a GEMM's, priced |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dvfsim_convwidth_") as tmp:
        for ncu in sorted(glob.glob(os.path.join(args.folder, "ncu_op_*.subset.csv.gz"))):
            tag = os.path.basename(ncu)[len("ncu_"):-len(".subset.csv.gz")]
            stem = os.path.join(args.folder, tag)
            with open(stem + ".measured.json") as f:
                m = json.load(f)
            reps = int(m["options"]["reps"])
            device = device_of(stem)
            rows = read_ncu_rows(ncu)
            est = replay(args.dvfsim, stem, device, None, reps, tmp)
            counted = replay(args.dvfsim, stem, device, rows, reps, tmp)

            def energy(ks, conv):
                return sum(float(k["energy_j"]) for k in ks if bool(CONV.search(k["name"])) == conv)
            implied = m["energy_per_step_j"] - energy(counted, False) / (1 + args.control)
            convs = [k for k in est if CONV.search(k["name"])]
            conv_ns = sum(float(k["duration_ns"]) for k in convs)
            # ncu counted one repetition: each of its convolution rows pairs with the trace's next
            # convolution kernel of the same name (greedy, in launch order; ncu_utilisation.paired
            # pairs by position and would drop a row whose kernel cuDNN launched in another order)
            pairs, i = [], 0
            for r in (r for r in rows if CONV.search(r["kernel"])):
                j = next((j for j in range(i, len(convs)) if convs[j]["name"][:60] == r["kernel"][:60]), None)
                if j is None:
                    sys.exit(f"{tag}: Nsight Compute's kernel {r['kernel'][:60]} has no partner in the trace")
                pairs.append((r, convs[j]))
                i = j + 1
            l2 = sum(float(r["l2_bytes"]) for r, _ in pairs)
            flops = sum(float(k["flops"]) for _, k in pairs)
            beyond = sum(max(0.0, float(r["l2_bytes"]) - GEMM_L2_BYTES_PER_FLOP * float(k["flops"]))
                         for r, k in pairs)
            priced = l2_excess_joules_per_byte(device) * beyond * reps
            print(f"| `{tag}` | {m['mean_power_w']:.1f} ({m['mean_sm_mhz']:.0f}) | "
                  f"{conv_ns * 1e-9 / m['time_per_step_s']:.2f} | {implied:.3f} J | "
                  f"{pct(100 * (energy(est, True) / implied - 1))} | "
                  f"{pct(100 * (energy(counted, True) / implied - 1))} | {l2 / flops:.4f} | "
                  f"{priced:.3f} J ({pct(100 * priced / implied)}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
