#!/usr/bin/env python3
"""The `toggle` suite's rows against the bits their data flip.

For each row of call1/ and call2/ (models/calibration/h200/microbench.py
--suite toggle, one H100 board, every row at 1980 MHz and the same DRAM
bandwidth): its power, and where the data fall between constant data and
fp32 N(0, 1) data, measured (P - P_zeros) / (P_fp32 - P_zeros) with the same
call's two copies, against the flip rate computed from the data kind (mean
over the bit lanes of 2p(1 - p), p a lane's share of ones, of 2^21 samples,
over fp32 N(0, 1) data's). The rule that prices these rates is not in the
model (tried on a branch that did not land; docs/calibration.md, "Bits on
the memory bus").

  python3 validation/h100/toggle/table.py
"""
import csv
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def lane_flips(words):
    """Mean over the bit lanes of 2p(1 - p) for an array of uint32 words."""
    w = words.astype(np.uint64)
    p = np.array([((w >> k) & 1).mean() for k in range(32)])
    return float((2 * p * (1 - p)).mean())


def computed():
    """The flip rate of each data kind of the suite over fp32 N(0, 1) data's."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1 << 21)
    f32 = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bf = ((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16) & 0xFFFF  # round to nearest even
    xr = np.maximum(x, 0).astype(np.float32).view(np.uint32).astype(np.uint64)
    bfr = ((xr + 0x7FFF + ((xr >> 16) & 1)) >> 16) & 0xFFFF
    pair = lambda h: (h[0::2] | (h[1::2] << 16)).astype(np.uint32)  # two 16-bit values a word
    idx = rng.integers(0, 200_000, 1 << 20).astype(np.int64).view(np.uint32)
    kinds = {
        "fp32": f32.astype(np.uint32),
        "fp32_zeros": np.zeros(1 << 20, np.uint32),
        "fp32_bits": rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32),
        "bf16": pair(bf),
        "fp16": pair(x.astype(np.float16).view(np.uint16).astype(np.uint64)),
        "bf16_relu": pair(bfr),
        "fp32_relu": xr.astype(np.uint32),
        "int64_index": idx,
        "fp32_bf16vals": (bf << 16).astype(np.uint32),
    }
    ref = lane_flips(kinds["fp32"])
    return {k: lane_flips(v) / ref for k, v in kinds.items()}, ref


def main():
    calc, ref = computed()
    print(f"fp32 N(0, 1): {ref:.4f} flips per bit lane\n")
    print("| call | row | W | measured toggle | computed |")
    print("|---|---|---|---|---|")
    for call in ("call1", "call2"):
        rows = {r["name"]: r for r in csv.DictReader(open(os.path.join(HERE, call, "measurements.csv")))}
        fp32 = [float(rows[n]["mean_power_w"]) for n in ("copy_4GB_fp32", "copy_4GB_fp32_again") if n in rows]
        p1 = sum(fp32) / len(fp32)
        p0 = float(rows["copy_4GB_fp32_zeros"]["mean_power_w"])
        for name, r in rows.items():
            if r["class"] in ("idle", "deep_idle"):
                continue
            w = float(r["mean_power_w"])
            kind = name.split("_", 2)[-1] if name.startswith("copy_4GB_") else None
            kind = kind.removesuffix("_again") if kind else None
            measured = f"{(w - p0) / (p1 - p0):.3f}" if kind else ""
            c = f"{calc[kind]:.3f}" if kind in calc else ""
            print(f"| {call} | `{name}` | {w:.1f} | {measured} | {c} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
