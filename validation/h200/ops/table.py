#!/usr/bin/env python3
"""The per-operator table of docs/validation.md, "Operators in isolation".

For every operator capture of this folder (calls 1-2), of repeat/ (call 3,
another board), of call4/ (run4.sh, a third board), of call5/ (run5.sh, a
fifth board) and of call12/ (run12.sh, a sixth board: its controls), runs `dvfsim hw validate --json` twice: as the trace is, and
with Nsight Compute's warp-instruction counts of one repetition
(`op_<name>.ncu_subset.csv.gz`, repeated once per repetition of a step) as the
instruction sidecar. Prints one Markdown row per operator: measured power,
the model's power error with the host at the capture's own pairing (the
GPU and power models' error, not the host's), the same with the measured
counts, the estimate's instructions over the measured ones, and Nsight
Compute's L2 traffic over the compulsory bytes (DRAM reads plus what the SMs
wrote into L2).

  python3 validation/h200/ops/table.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.append(os.path.join(ROOT, "scripts"))
sys.path.append(os.path.join(ROOT, "traces", "capture"))  # after HERE: it has a workloads.py too
from ncu_compare import read_native, read_ncu_rows  # noqa: E402
from validation_table import validate_with_sidecar  # noqa: E402
from workloads import OPS  # noqa: E402


def ncu_rows(op):
    path = os.path.join(HERE, f"op_{op}.ncu_subset.csv.gz")
    return read_ncu_rows(path) if os.path.exists(path) else None


def validate(dvfsim, trace, measured, device="h200"):
    out = subprocess.run([dvfsim, "hw", "validate", "--trace", trace, "--measured", measured,
                          "--device", device, "--json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"table: dvfsim hw validate failed on {trace}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def estimated_instructions(dvfsim, trace, tmp):
    """Warp instructions the annotation estimates for the first traced step."""
    native = os.path.join(tmp, "step.native")
    subprocess.run([dvfsim, "trace", "convert", trace, "--out", native, "--no-cache"],
                   check=True, capture_output=True)
    return sum(k["instructions"] for k in read_native(native)
               if k["iteration"] == 0 and k["cls"] not in ("memcpy", "memset"))


def row(dvfsim, folder, op, tmp):
    stem = os.path.join(folder, f"op_{op}")
    trace, measured = stem + ".kineto.json.gz", stem + ".measured.json"
    if not os.path.exists(measured):
        return None
    with open(measured) as f:
        m = json.load(f)
    reps = int(m["options"]["reps"])
    plain = validate(dvfsim, trace, measured)["paired"]
    rows = ncu_rows(op)
    counted, ratio, l2 = None, None, None
    if rows:
        # Nsight Compute counted one repetition; one iteration runs `reps`.
        q, error = validate_with_sidecar(dvfsim, stem, rows, repeat=reps)
        if q is None:
            raise SystemExit(f"table: dvfsim hw validate failed on {stem} with a sidecar: {error}")
        counted = q["paired"]
        side = tempfile.mkdtemp(dir=tmp)
        measured_inst = reps * sum(float(r["instructions"]) for r in rows)
        ratio = estimated_instructions(dvfsim, trace, side) / measured_inst if measured_inst > 0 else None
        compulsory = sum(float(r["dram_read_bytes"]) + float(r["l2_write_bytes"] or 0) for r in rows)
        l2 = sum(float(r["l2_bytes"]) for r in rows) / compulsory if compulsory > 0 else None
    board = (m.get("board") or {}).get("uuid", "not recorded")
    return {"op": op, "power_w": m["mean_power_w"], "mhz": m["mean_sm_mhz"], "board": board[:12],
            "time": plain["time_error_pct"], "power": plain["power_error_pct"],
            "power_counted": counted["power_error_pct"] if counted else None,
            "inst_ratio": ratio, "l2": l2}


def pct(v):
    return "–" if v is None else f"{v:+.1f} %".replace("-", "−")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    args = ap.parse_args()
    print("| operator | set (board) | measured W (MHz) | time | power | power, measured counts "
          "| instructions, estimate / measured | L2 traffic / compulsory bytes |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for op in OPS:
            for label, folder in (("1", HERE), ("repeat", os.path.join(HERE, "repeat")),
                                  ("4", os.path.join(HERE, "call4")), ("5", os.path.join(HERE, "call5")),
                                  ("12", os.path.join(HERE, "call12"))):
                r = row(args.dvfsim, folder, op, tmp)
                if r is None:
                    continue
                ratio = "–" if r["inst_ratio"] is None else f"{r['inst_ratio']:.3g}"
                l2 = "–" if r["l2"] is None else f"{r['l2']:.2f}"
                print(f"| `{op}` | {label} ({r['board']}) | {r['power_w']:.0f} ({r['mhz']:.0f}) | "
                      f"{pct(r['time'])} | {pct(r['power'])} | {pct(r['power_counted'])} | {ratio} | {l2} |")


if __name__ == "__main__":
    main()
