#!/usr/bin/env python3
"""Whether a trace's annotation predicts the L2 traffic of its kernels
(docs/calibration.md, "Kernels on a few SMs", the traffic price on whole
steps): every kernel of the captures with Nsight Compute rows (the full
sidecars of validation/h200/classes and heldout, the subsets of heldout5-7,
paired as scripts/ncu_utilisation.py pairs them) gives ncu's L2 bytes
(lts__t_bytes) over the annotated compulsory bytes. Prints, per kernel
class, the time-weighted p25 / median / p75 of that ratio and of ncu's L2
rate; then, per capture, the busy energy of its memory-bound kernels priced
by residency (199 W x min(1, CTAs / 132) x ncu's duration) and capped by
their traffic (the rate at which 46 pJ per L2 byte equals the busy term,
4.33 TB/s at 1980 MHz), the traffic from the annotation (1.55 x its bytes)
and from ncu.

  python3 models/calibration/h200/traffic_annotation.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import glob
import os
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import ncu_utilisation as nu  # noqa: E402
from busy_vs_traffic import BUSY_W, SMS  # noqa: E402  (beside this file)

# Where the traffic price equals the busy term: BUSY_W over busy_vs_traffic's
# J_PER_BYTE, 4.326e12, to three figures.
KNEE_B_PER_S = 4.33e12
L2_PER_ANNOTATED = 1.55
MEMORY_BOUND = ("elementwise", "norm", "reduction", "optimizer")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    args = ap.parse_args()
    full = sorted(glob.glob(os.path.join(ROOT, "validation", "h200", "*", "*.ncu_kernels.csv.gz")))
    sets = [(os.path.relpath(p, ROOT)[: -len(".ncu_kernels.csv.gz")], os.path.relpath(p, ROOT), None)
            for p in full] + [
        (stem, ncu, rx) for _, stem, ncu, rx in nu.OTHER + nu.FAMILIES + nu.SIXTH + nu.TRANSFORMS]
    rows = []
    with tempfile.TemporaryDirectory(prefix="dvfsim_traffic_") as tmp:
        for stem, ncu, rx in sets:
            for k, r in nu.paired(args.dvfsim, tmp, stem, ncu, rx):
                rows.append((os.path.basename(stem), k, float(r["l2_bytes"]), float(r["duration_ns"]),
                             int(r["grid"])))
    print(f"{len(rows)} kernels paired over {len(sets)} Nsight Compute sets")
    by_class = defaultdict(list)
    for row in rows:
        by_class[row[1]["cls"]].append(row)
    print(f"{'class':12s} {'kernels':>7s} {'ncu ms':>8s}   L2 / annotated bytes p25 med p75   L2 TB/s p25 med p75")
    for cls, rs in sorted(by_class.items(), key=lambda x: -sum(r[3] for r in x[1])):
        ratio = [(ns, l2 / k["dram"]) for _, k, l2, ns, _ in rs if k["dram"] > 0]
        rate = [(ns, l2 / ns / 1e3) for _, k, l2, ns, _ in rs if ns > 0]
        print(f"{cls:12s} {len(rs):7d} {sum(r[3] for r in rs) / 1e6:8.2f}   " +
              " ".join(f"{nu.weighted_quantile(ratio, q):6.2f}" for q in (0.25, 0.5, 0.75)) + "          " +
              " ".join(f"{nu.weighted_quantile(rate, q):5.2f}" for q in (0.25, 0.5, 0.75)))
    print(f"\nbusy energy of the memory-bound kernels (J per step's paired kernels)")
    print(f"{'capture':34s} {'kernels':>7s} {'residency':>9s} {'capped, annotation':>19s} {'capped, ncu':>12s}")
    per = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for cap, k, l2, ns, grid in rows:
        if k["cls"] not in MEMORY_BOUND or ns <= 0:
            continue
        s, share = ns * 1e-9, min(1.0, grid / SMS)
        p = per[cap]
        p[0] += 1
        p[1] += BUSY_W * share * s
        p[2] += BUSY_W * min(share, L2_PER_ANNOTATED * k["dram"] / (s * KNEE_B_PER_S)) * s
        p[3] += BUSY_W * min(share, l2 / (s * KNEE_B_PER_S)) * s
    for cap, (n, res, ann, meas) in sorted(per.items()):
        print(f"{cap:34s} {n:7d} {res:9.3f} {ann:19.3f} {meas:12.3f}")


if __name__ == "__main__":
    main()
