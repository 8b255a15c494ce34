#!/usr/bin/env python3
"""Measure the work fallback's fractions of peak on kernels that have shapes.

For each capture, runs `dvfsim run --outputs kernels` (device h200, policy
native) and, over the kernels whose work comes from shapes, prints the
time-weighted fraction of the capture roofline they reach over their
duration less the 1 us launch and drain (traces/annotate.h,
fallback_fixed_ns): FLOPs / ((d - 1 us) x tensor peak) for GEMMs grouped by
the CTA tile of their names (>= 256x128, >= 128x128, smaller, skinny <= 16),
bytes / ((d - 1 us) x DRAM peak) for GEMMs and for the memory-bound classes.
Then the median over the captures and each capture's leave-one-out median
(docs/validation.md, "CUDA graphs"). The peaks are the H200's at the
capture's clocks, as the annotation uses them: the tensor peak at the
measured mean SM clock (`mean_sm_mhz` of `<tag>.measured.json`), the DRAM
peak at 3201 MHz.

  python3 scripts/fallback_fractions.py [--dvfsim build/apps/dvfsim] [--out DIR]
"""
import argparse
import collections
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPTURES = [
    "validation/h200/gpt3xl_train_b4_t2048",
    "validation/h200/classes/bert_base_train_b32_t512",
    "validation/h200/classes/encoder_small_train_b2",
    "validation/h200/classes/gpt3medium_train_b1_t512",
    "validation/h200/classes/llama1b_decode_b1_kv512",
    "validation/h200/classes/llama1b_prefill_t32k",
    "validation/h200/classes/llama1b_train_b2_t2048",
    "validation/h200/classes/moe8x_train_b8_t1024",
    "validation/h200/classes/resnet50_train_b128",
]
TENSOR_FLOPS_PER_CLOCK = 4096 * 132  # models/devices/h200.yaml
DRAM_PEAK = 4.8e12
FIXED_NS = 1000
MEMORY = {"elementwise", "reduction", "norm", "other"}
TILE = re.compile(r"(?:^|_|tilesize)(\d{1,4})x(\d{1,4})(?=_|x)")


def tile(name):
    for m in TILE.finditer(name):
        a, b = int(m.group(1)), int(m.group(2))
        if 8 <= a <= 512 and 8 <= b <= 512:
            return a, b
    return None


def of_dram_peak(key):
    """Whether the quantity `key` is a fraction of the DRAM peak (bytes), not
    of the tensor peak (FLOPs)."""
    return key in ("memory classes", "gemm bytes", "gemm skinny") or key.startswith("memory: ")


def group(name):
    t = tile(name)
    if "gemv" in name or "Gemv" in name or "splitKreduce" in name or (t and min(t) <= 16):
        return "gemm skinny"
    if t is None:
        return "gemm no tile"
    area = t[0] * t[1]
    return "gemm >=256x128" if area >= 32768 else "gemm >=128x128" if area >= 16384 else "gemm smaller"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    ap.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="dvfsim_fallback_")
    per = collections.defaultdict(dict)  # quantity -> capture -> fraction
    for stem in CAPTURES:
        tag = os.path.basename(stem)
        with open(os.path.join(ROOT, stem + ".measured.json")) as f:
            tensor_peak = TENSOR_FLOPS_PER_CLOCK * json.load(f)["mean_sm_mhz"] * 1e6
        run_dir = os.path.join(out, tag)
        subprocess.run([args.dvfsim, "run", "--trace", os.path.join(ROOT, stem + ".kineto.json.gz"),
                        "--device", "h200", "--policy", "native", "--baseline", "none",
                        "--outputs", "kernels", "--out", run_dir], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        acc = collections.defaultdict(lambda: [0.0, 0.0, 0.0])  # seconds, flops, bytes
        with open(os.path.join(run_dir, "names.csv")) as f:  # kernels.csv names by id
            names = {row["name_id"]: row["name"] for row in csv.DictReader(f)}
        with open(os.path.join(run_dir, "kernels.csv")) as f:
            for k in csv.DictReader(f):
                k["name"] = names[k["name_id"]]
                if k["work_source"] != "shapes":
                    continue
                s = max(0, int(k["duration_ns"]) - FIXED_NS) * 1e-9
                if k["class"] == "gemm":
                    keys = [group(k["name"]), "gemm bytes"]
                elif k["class"] in MEMORY:
                    keys = ["memory classes", "memory: " + k["class"]]
                else:
                    continue
                for key in keys:
                    a = acc[key]
                    a[0] += s
                    a[1] += float(k["flops"])
                    a[2] += float(k["dram_bytes"])
        for key, (s, flops, nbytes) in acc.items():
            if s < 1e-4:  # under 0.1 ms: too little to weigh
                continue
            per[key][tag] = nbytes / s / DRAM_PEAK if of_dram_peak(key) else flops / s / tensor_peak
    for key in sorted(per):
        v = per[key]
        med = statistics.median(v.values())
        loo = [statistics.median([x for u, x in v.items() if u != t]) for t in v] if len(v) > 1 else [med]
        unit = "of DRAM peak" if of_dram_peak(key) else "of tensor peak"
        print(f"{key:16s} median {med:.3f} {unit} over {len(v)} captures "
              f"(range {min(v.values()):.3f}-{max(v.values()):.3f}; leave-one-out {min(loo):.3f}-{max(loo):.3f})")
        for t, x in sorted(v.items()):
            print(f"    {t:30s} {x:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
