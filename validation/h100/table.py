#!/usr/bin/env python3
"""The H100 table of docs/validation.md ("Another GPU: an H100 SXM"):
`dvfsim hw validate --device h100-sxm --json` on every capture of this
folder, one Markdown row each (time and energy per step, default profiler
correction; energy with the capture's own host pairing).

  python3 validation/h100/table.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def pct(x):
    return f"{x:+.2f} %".replace("-", "\u2212")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    args = ap.parse_args()
    print("| capture | measured ms / J / W per step | time | energy | power | own pairing: energy |")
    print("|---|---|---|---|---|---|")
    for trace in sorted(glob.glob(os.path.join(HERE, "*.kineto.json.gz"))):
        stem = trace[: -len(".kineto.json.gz")]
        r = subprocess.run([args.dvfsim, "hw", "validate", "--trace", trace, "--measured",
                            stem + ".measured.json", "--device", "h100-sxm", "--json"],
                           capture_output=True, text=True)
        if not r.stdout.strip():
            print(f"{os.path.basename(stem)}: {r.stderr.strip()}", file=sys.stderr)
            return 1
        d = json.loads(r.stdout)
        m, p, pa = d["measured"], d["predicted"], d.get("paired")
        own = pct(pa["energy_error_pct"]) if pa else "n/a"
        print(f"| `{os.path.basename(stem)}` | {m['time_per_iteration_s'] * 1e3:.2f} / "
              f"{m['energy_per_iteration_j']:.2f} / {m['power_w']:.1f} | "
              f"{pct(p['time_error_pct'])} | **{pct(p['energy_error_pct'])}** | "
              f"{pct(p['power_error_pct'])} | {own} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
