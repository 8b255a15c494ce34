#!/usr/bin/env python3
"""The busy term priced by residency against the same term priced by L2
traffic, summed over one step of every capture with a full Nsight Compute
sidecar (docs/calibration.md, "Kernels on a few SMs"): per kernel, the
residency price is 199 W (the busy term at 1980 MHz) x min(1, CTAs / 132) x
its duration; the traffic price is its measured L2 bytes (lts__t_bytes) x
46 pJ, what a copy on any grid drew per byte through L2 on the H100
(validation/h100/traffic/). Standard library only.

  python3 models/calibration/h200/busy_vs_traffic.py
"""
import glob
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "traces", "capture"))
from ncu_compare import read_ncu_rows  # noqa: E402
BUSY_W, SMS, J_PER_BYTE = 199.0, 132, 46e-12


def main():
    pattern = os.path.join(ROOT, "validation", "h200", "*", "*.ncu_kernels.csv.gz")
    print(f"{'capture':40s} {'GPU ms':>8s} {'residency J':>12s} {'traffic J':>10s} {'ratio':>6s}")
    for path in sorted(glob.glob(pattern)):
        rows = read_ncu_rows(path)
        t = [float(r["duration_ns"]) * 1e-9 for r in rows]
        busy = sum(BUSY_W * min(1.0, float(r["grid"]) / SMS) * s for r, s in zip(rows, t))
        traffic = sum(float(r["l2_bytes"]) * J_PER_BYTE for r in rows)
        name = os.path.basename(path)[: -len(".ncu_kernels.csv.gz")]
        print(f"{name:40s} {sum(t) * 1e3:8.2f} {busy:12.3f} {traffic:10.3f} {traffic / busy:6.2f}")


if __name__ == "__main__":
    main()
