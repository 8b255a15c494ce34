#!/usr/bin/env python3
"""The held-out tables of docs/validation.md for the rows-read-twice rule
(row_reread_bytes, traces/annotate.h): for every block-a-row softmax and
layer/RMS norm kernel that Nsight Compute measured on H100 boards, the reads
it made in units of the tensor it re-reads, the reads the rule gives, and
the annotated bytes (reads plus the write) over the measured ones before
the rule and with it.

The rule's inputs come from models/devices/h100-sxm.yaml (SMs, threads,
blocks and registers per SM, l2_bytes and its residency fractions) and each
kernel's launch (grid, block, registers) as ncu recorded it; the law is
re-stated here in a few lines, and two tests pin the C++ to the same
numbers (tests/traces/rules_test.cpp: Rules.SoftmaxRowsTooLongForShared-
MemoryAreReadOncePerPass, Rules.NormKernelsReReadWideRowsByTheL2-
ResidencyLaw).

  python3 scripts/reread_check.py softmax  [validation/h100/softmax]
  python3 scripts/reread_check.py norms
"""
import csv
import glob
import gzip
import math
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def device(name="h100-sxm"):
    with open(os.path.join(ROOT, "models", "devices", f"{name}.yaml")) as f:
        d = yaml.safe_load(f)
    v = lambda section, key: float(d[section][key]["value"])  # noqa: E731
    return {"sms": v("compute", "sm_count"), "threads": v("compute", "max_threads_per_sm"),
            "blocks": v("compute", "max_blocks_per_sm"), "regs": v("compute", "registers_per_sm"),
            "l2": v("latency", "l2_bytes"), "lo": v("latency", "l2_resident_below"),
            "hi": v("latency", "l2_resident_above")}


def resident_share(dev, footprint):
    lo, hi = dev["lo"] * dev["l2"], dev["hi"] * dev["l2"]
    return 1.0 if footprint <= lo else 0.0 if footprint >= hi else (hi - footprint) / (hi - lo)


def resident_rows(dev, grid, block, regs):
    """Blocks of a launch the SMs hold at once (resident_warp_share's limits)."""
    warps = math.ceil(block / 32)
    per_sm = min(dev["blocks"], (dev["threads"] // 32) // warps)
    if regs > 0:
        per_warp = math.ceil(regs * 32 / 256) * 256
        per_sm = min(per_sm, dev["regs"] // (per_warp * warps))
    return int(min(grid, max(per_sm, 1) * dev["sms"]))


def num(s):
    return float(str(s).replace(",", ""))


def softmax(folder):
    dev = device()
    path = os.path.join(folder, "ncu_softmax.csv.gz")
    with gzip.open(path, "rt") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("==")))
    ix = {n: i for i, n in enumerate(rows[0])}
    with open(os.path.join(folder, "cases.txt")) as f:
        cases = [line.split() for line in f if line.strip()]
    kernels = rows[2:]
    if len(kernels) != 2 * len(cases):
        sys.exit(f"{path}: {len(kernels)} kernels for {len(cases)} cases (two each expected)")
    print("| case | kernel | rows resident × row read again = bytes between "
          "| measured reads (of the re-read tensor) | rule | annotated / measured, before → after |")
    print("|---|---|---|---|---|---|")
    for c, case in enumerate(cases):
        tag, nrows, width = case[0], int(case[1]), int(case[2])
        for j, k in enumerate(kernels[2 * c: 2 * c + 2]):
            name = k[ix["Kernel Name"]]
            kernel = name.split("cunn_")[1].split("<")[0]
            elt = 2 if "BFloat16, float, c10::BFloat16" in name else 4
            grid = int(num(k[ix["launch__grid_size"]]))
            res = resident_rows(dev, grid, int(num(k[ix["launch__block_size"]])),
                                int(num(k[ix["launch__registers_per_thread"]])))
            read = num(k[ix["dram__bytes_read.sum"]])
            write = num(k[ix["lts__t_sectors_srcunit_tex_op_write.sum"]]) * 32
            tensor = nrows * width * elt
            between = res * width * elt
            rereads = {"SoftMaxForward": 2, "SoftMaxBackward": 1}.get(kernel, 0)
            once = 1 if j == 0 else 2  # forward: the input; backward: grad and output
            rule = once + rereads * (1 - resident_share(dev, between))
            print(f"| `{tag}` | {kernel} | {res} × {width * elt / 1024:.0f} KB = {between / 1e6:.1f} MB "
                  f"| {read / tensor:.2f} | {rule:.2f} | {(once * tensor + write) / (read + write):.2f} → "
                  f"{(rule * tensor + write) / (read + write):.2f} |")


def norms():
    dev = device()
    print("| capture | kernel | rows | row | bytes between | measured reads (tensor units) "
          "| rule | annotated / measured, before → after |")
    print("|---|---|---|---|---|---|---|---|")
    base = os.path.join(ROOT, "validation", "h100", "norms")
    for path in sorted(glob.glob(os.path.join(base, "**", "ncu_op_*.subset.csv.gz"), recursive=True)):
        with gzip.open(path, "rt") as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                fwd = "vectorized_layer_norm_kernel" in r["kernel"]
                dx = "layer_norm_grad_input_kernel" in r["kernel"]
                tensor = float(r["l2_write_bytes"])  # y or dx: one tensor
                if not (fwd or dx) or tensor <= 0:
                    continue
                grid = int(r["grid"])
                res = resident_rows(dev, grid, int(r["block"]), int(r["registers"]))
                tensors = 2 if dx else 1  # dx re-reads dy and x, the forward x
                row = tensor / grid
                between = res * row * tensors
                rule = tensors * (2 - resident_share(dev, between))
                meas = float(r["dram_read_bytes"]) / tensor
                tag = os.path.relpath(path, base).replace("ncu_op_", "").replace(".subset.csv.gz", "")
                print(f"| `{tag}` | {'dx' if dx else 'forward'} | {grid} | {row / 1024:.1f} KB "
                      f"| {between / 1e6:.1f} MB | {meas:.2f} | {rule:.2f} | "
                      f"{(tensors + 1) / (meas + 1):.2f} → {(rule + 1) / (meas + 1):.2f} |")


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "softmax":
        softmax(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "validation", "h100", "softmax"))
    elif what == "norms":
        norms()
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
