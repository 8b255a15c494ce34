#!/usr/bin/env python3
"""Warp instructions of cuDNN's tensor-core convolution kernels (the fprop,
dgrad and wgrad passes, `xmma` or `tensorop` in the name): Nsight Compute's
count against the per-class estimate, and what each capture's energy reads
with each (docs/validation.md, "Instructions of the tensor-core
convolutions").

Per capture with such an ncu subset: the paired kernels, ncu's instructions
over the estimate's, ncu's issue rate as a fraction of the H200's issue peak
(time-weighted over ncu's durations), and the energy error of `dvfsim hw
validate` (device h200, default host correction) as shipped, with ncu's
counts of those kernels as the instruction sidecar, and with every
tensor-core convolution kernel charged `--fraction` of the issue peak over
its traced duration less 1 us (the rule tried and not kept; 0.218 is the
time-weighted rate of the ResNet-50 step of validation/h200/classes/, its fit).

  python3 validation/h200/convncu/table.py [--dvfsim build/apps/dvfsim] [--fraction 0.218]
"""
import argparse
import csv
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from ncu_utilisation import ISSUE_PEAK, FIXED_NS, measured, paired, read_ncu_rows  # noqa: E402
from validation_table import pct, validate, validate_with_sidecar  # noqa: E402

V = "validation/h200/"
H7 = "ToNhwc|ToNchw|convolve|fprop|dgrad|wgrad|upsample"  # heldout7/run2.sh
CONV = "fprop|dgrad|wgrad"  # convncu/run.sh
# (label, capture stem, ncu subset, bound, the regex the ncu run selected kernels with)
CAPTURES = [
    ("ResNet-50 (classes/, the rate's fit)", V + "classes/resnet50_train_b128",
     V + "classes/resnet50_train_b128.ncu_kernels.csv.gz", "GPU", None),
    ("R3D-18", V + "heldout5/r3d18_train_b8", V + "heldout5/ncu_r3d18_train_b8.subset.csv.gz", "GPU",
     "batch_norm|ToNhwc|ToNchw|convolveNd|indexed"),
    ("MC3-18", V + "heldout7/mc3_18_train_b8", V + "heldout7/ncu_mc3_18_train_b8.subset.csv.gz", "GPU", H7),
    ("R(2+1)D-18", V + "heldout7/r2plus1d_18_train_b8", V + "heldout7/ncu_r2plus1d_18_train_b8.subset.csv.gz",
     "GPU", H7),
    ("3-D U-Net", V + "heldout7/unet3d_train_b2_96", V + "heldout7/ncu_unet3d_train_b2_96.subset.csv.gz", "GPU", H7),
    ("ResNet-50 fp32 NCHW", V + "heldout7/resnet50_fp32_nchw_train_b64",
     V + "heldout7/ncu_resnet50_fp32_nchw_train_b64.subset.csv.gz", "GPU", H7),
    ("FCN-ResNet-50", V + "heldout7/fcn_resnet50_train_b8_256",
     V + "heldout7/ncu_fcn_resnet50_train_b8_256.subset.csv.gz", "launch", H7),
    ("VGG-16 (AdamW)", V + "heldout3/vgg16_train_b64_adamw", V + "convncu/ncu_vgg16_train_b64_adamw.subset.csv.gz",
     "GPU", CONV),
    ("ResNet-152 inference", V + "heldout3/resnet152_infer_b256", V + "convncu/ncu_resnet152_infer_b256.subset.csv.gz",
     "GPU", CONV),
    ("Wide ResNet-50 fp16 inference", V + "heldout5/wide_resnet50_infer_fp16_b128",
     V + "convncu/ncu_wide_resnet50_infer_fp16_b128.subset.csv.gz", "GPU", CONV),
    ("ResNet-18 (12-03)", V + "heldout2/resnet18_train_b32", V + "convncu/ncu_resnet18_train_b32.subset.csv.gz",
     "launch", CONV),
    ("ResNet-18 (12-04)", V + "timing/resnet18_train_b32", V + "convncu/ncu_resnet18_train_b32.subset.csv.gz",
     "launch", CONV),
    ("U-Net (12-03)", V + "heldout2/unet_train_b8_128", V + "convncu/ncu_unet_train_b8_128.subset.csv.gz",
     "launch", CONV),
    ("U-Net (12-04)", V + "timing/unet_train_b8_128", V + "convncu/ncu_unet_train_b8_128.subset.csv.gz",
     "launch", CONV),
    ("RegNetY-800MF", V + "heldout4/regnety800mf_train_b128", V + "convncu/ncu_regnety800mf_train_b128.subset.csv.gz",
     "launch", CONV),
    ("DenseNet-121", V + "heldout5/densenet121_train_b64", V + "convncu/ncu_densenet121_train_b64.subset.csv.gz",
     "launch", CONV),
]
_PASS = re.compile(r"fprop|dgrad|wgrad")


def tensor_conv(name):
    """A tensor-core convolution pass of cuDNN (not its depthwise, grouped-direct or reduction kernels)."""
    return bool(_PASS.search(name)) and ("xmma" in name or "tensorop" in name)


def energy_error(dvfsim, stem):
    d, error = validate(dvfsim, stem)
    if d is None:
        sys.exit(f"dvfsim hw validate {stem}: {error}")
    return d["predicted"]["energy_error_pct"]


def with_sidecar(dvfsim, stem, rows):
    """The energy error of the capture replayed with `rows` (dicts or sequences of
    validation_table.SIDECAR_COLUMNS) as its instruction sidecar."""
    d, error = validate_with_sidecar(dvfsim, os.path.join(ROOT, stem), rows)
    if d is None:
        sys.exit(f"dvfsim hw validate {stem} with a sidecar: {error}")
    return d["predicted"]["energy_error_pct"]


def kineto_conv_rows(stem, iteration_correlations, fraction):
    """Sidecar rows charging every tensor-core convolution kernel of one iteration `fraction` of
    the issue peak over its traced duration less FIXED_NS."""
    with gzip.open(os.path.join(ROOT, stem + ".kineto.json.gz"), "rt") as f:
        events = json.load(f)["traceEvents"]
    ks = sorted((e for e in events if e.get("cat") == "kernel" and tensor_conv(e["name"])
                 and e.get("args", {}).get("correlation") in iteration_correlations), key=lambda e: e["ts"])
    rows = []
    for k in ks:
        a = k["args"]
        g, b = a["grid"], a["block"]
        rows.append([k["name"], g[0] * g[1] * g[2], b[0] * b[1] * b[2], a.get("registers per thread", 0),
                     fraction * max(k["dur"] * 1000 - FIXED_NS, 0) * 1e-9 * ISSUE_PEAK])
    return rows


def iteration_correlations(dvfsim, tmp, stem):
    """Correlation ids of the kernels of the trace's iteration 1 (`dvfsim run --outputs kernels`)."""
    out = os.path.join(tmp, "run")
    subprocess.run([dvfsim, "run", "--trace", os.path.join(ROOT, stem + ".kineto.json.gz"), "--device", "h200",
                    "--policy", "native", "--baseline", "none", "--out", out, "--outputs", "summary,kernels",
                    "--no-cache"], check=True, capture_output=True)
    with open(os.path.join(out, "kernels.csv")) as f:
        ids = {int(r["correlation_id"]) for r in csv.DictReader(f) if r["iteration"] == "1"}
    shutil.rmtree(out)
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    ap.add_argument("--fraction", type=float, default=0.218)
    args = ap.parse_args()
    print("| capture | bound | kernels paired | ncu / estimate | ncu issue rate | energy: estimate | "
          f"ncu's counts | {args.fraction:g} of the issue peak |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dvfsim_convncu_") as tmp:
        for label, stem, ncu, bound, regex in CAPTURES:
            pairs = [(k, r) for k, r in paired(args.dvfsim, tmp, stem, ncu, regex) if tensor_conv(k["name"])]
            inst = sum(measured(r)[2] for _, r in pairs)
            est = sum(k["instructions"] for k, _ in pairs)
            ns = sum(measured(r)[0] for _, r in pairs)
            rate = sum(measured(r)[2] for _, r in pairs) / max((ns - FIXED_NS * len(pairs)) * 1e-9 * ISSUE_PEAK, 1)
            rows = [r for r in read_ncu_rows(os.path.join(ROOT, ncu)) if tensor_conv(r["kernel"])]
            shipped = energy_error(args.dvfsim, os.path.join(ROOT, stem))
            counted = with_sidecar(args.dvfsim, stem, rows)
            frac_rows = kineto_conv_rows(stem, iteration_correlations(args.dvfsim, tmp, stem), args.fraction)
            charged = with_sidecar(args.dvfsim, stem, frac_rows)
            print(f"| {label} | {bound} | {len(pairs)} | {inst / est:.1f} | {rate:.3f} | {pct(shipped)} | "
                  f"{pct(counted)} | {pct(charged)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
