#!/usr/bin/env python3
"""The H100 table of docs/validation.md ("Another GPU: an H100 SXM"):
`dvfsim hw validate --device h100-sxm --json` on every capture of this
folder, of fp8/, heldout8/ to heldout11/, heldout20/, heldout23/ and heldout24/, one Markdown row
each (time and energy per step, default profiler correction; energy with
the capture's own host pairing).

  python3 validation/h100/table.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from validation_table import pct, validate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    args = ap.parse_args()
    print("| capture | measured ms / J / W per step | time | energy | power | own pairing: energy |")
    print("|---|---|---|---|---|---|")
    traces = sorted(glob.glob(os.path.join(HERE, "*.kineto.json.gz")))
    for sub in ("fp8", "heldout8", "heldout9", "heldout10", "heldout11", "heldout20", "heldout23", "heldout24"):
        traces += sorted(glob.glob(os.path.join(HERE, sub, "*.kineto.json.gz")))
    for trace in traces:
        stem = trace[: -len(".kineto.json.gz")]
        d, error = validate(args.dvfsim, stem, device="h100-sxm")
        if d is None:
            print(f"{os.path.basename(stem)}: {error}", file=sys.stderr)
            return 1
        m, p, pa = d["measured"], d["predicted"], d.get("paired")
        own = pct(pa["energy_error_pct"]) if pa else "n/a"
        print(f"| `{os.path.basename(stem)}` | {m['time_per_iteration_s'] * 1e3:.2f} / "
              f"{m['energy_per_iteration_j']:.2f} / {m['power_w']:.1f} | "
              f"{pct(p['time_error_pct'])} | **{pct(p['energy_error_pct'])}** | "
              f"{pct(p['power_error_pct'])} | {own} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
