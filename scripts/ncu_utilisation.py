#!/usr/bin/env python3
"""What Nsight Compute measured on kernels of chosen families, against the
work annotation: the figures of docs/validation.md, "Kernels of no known
family", "cuDNN's layout transforms and SIMT convolutions" and
"Instruction estimates of elementwise kernels" (gathers), "Upsampling and
roll from their shapes" (heldout21).

For each capture (a Kineto trace and an ncu subset of one step, as
ncu_reduce.py writes it, and the `-k regex` the ncu run selected kernels
with, if any), the trace's SM kernels of the iteration whose names pair best
with the ncu rows, in launch order, are paired with them. Per kernel family
(base name): ncu's duration, its DRAM traffic (reads plus what the SMs wrote
into L2, else DRAM writes) and warp instructions as fractions of the H200's
DRAM and issue peaks at 1980 MHz over the duration less 1 us, and the
annotation's bytes and instructions over ncu's. Then, over the kernels of
the class `other` of the held-out captures, the time-weighted medians of
those two fractions, and ncu's instructions per annotated byte of the
gather kernel (`vectorized_gather_kernel`) in the steps that have it.

  python3 scripts/ncu_utilisation.py [--dvfsim build/apps/dvfsim]
"""
import argparse
import functools
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "traces", "capture"))
from ncu_compare import base_name, read_native, read_ncu_rows  # noqa: E402

ISSUE_PEAK = 4 * 132 * 1980e6  # warp instructions/s: models/devices/h200.yaml
DRAM_PEAK = 4.8e12
FIXED_NS = 1000  # the fallback's launch and drain (traces/annotate.h)
H5, H2, C = "validation/h200/heldout5/", "validation/h200/heldout2/", "validation/h200/classes/"
# (tag, trace stem, ncu subset, the regex its ncu run selected kernels with)
OTHER = [
    ("DLRM", H5 + "dlrm_train_b2048", H5 + "ncu_dlrm_train_b2048.subset.csv.gz", None),
    ("Swin-T", H5 + "swin_t_train_b64", H5 + "ncu_swin_t_train_b64.subset.csv.gz",
     "roll|RadixSort|indexing_backward|UniqueByKey|Scan"),
    ("U-Net", H2 + "unet_train_b8_128", H5 + "ncu_unet_train_b8_128.subset.csv.gz", "upsample"),
    ("wav2vec 2.0", H5 + "wav2vec2_train_b4", H5 + "ncu_wav2vec2_train_b4.subset.csv.gz", "weight_norm"),
]
FAMILIES = [
    ("R3D-18", H5 + "r3d18_train_b8", H5 + "ncu_r3d18_train_b8.subset.csv.gz",
     "batch_norm|ToNhwc|ToNchw|convolveNd|indexed"),
    ("ResNet-18 NCHW", H5 + "resnet18_nchw_train_b128", H5 + "ncu_resnet18_nchw_train_b128.subset.csv.gz",
     "batch_norm"),
]
H6, H7 = "validation/h200/heldout6/", "validation/h200/heldout7/"
# The sixth set's kernels of the class `other` (and the GNN's every kernel).
SIXTH = [
    ("GNN", H6 + "gnn_sage_train_200k", H6 + "ncu_gnn_sage_train_200k.subset.csv.gz", None),
    ("DeepLabV3", H6 + "deeplabv3_train_b8_256", H6 + "ncu_deeplabv3_train_b8_256.subset.csv.gz", "upsample"),
    ("GPT-2 sampling", H6 + "gpt2_sample_b8", H6 + "ncu_gpt2_sample_b8.subset.csv.gz",
     "Sort|sort|topk|TopK|gather|multinomial|cumsum|scan|Scan"),
]
# cuDNN's layout transforms and SIMT convolutions, held out (docs/validation.md, "cuDNN's layout
# transforms and SIMT convolutions"); R3D-18 (FAMILIES) is their fit.
_CONV = "ToNhwc|ToNchw|convolve|fprop|dgrad|wgrad|upsample"
TRANSFORMS = [(tag, H7 + stem, H7 + f"ncu_{stem}.subset.csv.gz", _CONV) for tag, stem in (
    ("MC3-18", "mc3_18_train_b8"), ("R(2+1)D-18", "r2plus1d_18_train_b8"), ("3-D U-Net", "unet3d_train_b2_96"),
    ("FCN-ResNet-50", "fcn_resnet50_train_b8_256"), ("ResNet-50 fp32", "resnet50_fp32_nchw_train_b64"))] + [
    ("U-Net 2-D", H2 + "unet_train_b8_128", H7 + "ncu_unet_train_b8_128.subset.csv.gz", "ToNhwc|ToNchw|convolve"),
    ("wav2vec 2.0", H5 + "wav2vec2_train_b4", H7 + "ncu_wav2vec2_train_b4.subset.csv.gz", "ToNhwc|ToNchw|convolve"),
    ("ResNet-18 NCHW", H5 + "resnet18_nchw_train_b128", H7 + "ncu_resnet18_nchw_train_b128.subset.csv.gz",
     "ToNhwc|ToNchw"),
]
# The upsampling and roll rules held out on an H100 (validation/h100/heldout21: each operator alone,
# bf16 2-D modes in both layouts, fp32 roll); the DRAM and issue fractions are of the H200's peaks.
H21 = "validation/h100/heldout21/"
HELDOUT21 = [(f"heldout21 {tag}", H21 + f"op_{tag}", H21 + f"ncu_op_{tag}.subset.csv.gz", "upsample|roll")
             for tag in ("up2d_near", "up2d_near_cl", "up2d_bil", "up2d_bil_cl", "up2d_bic", "roll_fp32")]
# The tensor-core convolutions' instructions per FLOP, tried as a rate (not kept): fitted on this.
TENSOR_CONV_FIT = ("ResNet-50 channels-last (classes/)", C + "resnet50_train_b128",
                   C + "resnet50_train_b128.ncu_kernels.csv.gz", None)
GATHER = [
    ("shipped GPT-3-XL (fit)", "traces/data/gpt3xl_h200_train_b4_t2048",
     "traces/data/gpt3xl_h200_train_b4_t2048.ncu.csv.gz"),
    ("BERT", C + "bert_base_train_b32_t512", C + "bert_base_train_b32_t512.ncu_kernels.csv.gz"),
    ("small encoder", C + "encoder_small_train_b2", C + "encoder_small_train_b2.ncu_kernels.csv.gz"),
    ("32k prefill", C + "llama1b_prefill_t32k", C + "llama1b_prefill_t32k.ncu_kernels.csv.gz"),
]


_SM_KERNELS = {}  # trace stem -> its SM kernels: several tables read the same capture


# cuBLAS in the BERT-base and Llama-1B prefill steps: 0.0081-0.0091 (ncu); the model's own copy is
# kGemmL2BytesPerFlop in traces/annotate.h
GEMM_L2_BYTES_PER_FLOP = 0.0085


@functools.lru_cache(maxsize=None)
def l2_excess_joules_per_byte(device="h200"):
    """The power model's price of a byte of L2 traffic beyond streaming at 1 V:
    `l2_excess_w_per_v2ghz` over `l2_bytes_per_clock` of models/devices/<device>.yaml
    (23.5 pJ on the H200, fitted on layout-changing copies)."""
    import yaml
    with open(os.path.join(ROOT, "models", "devices", device + ".yaml")) as f:
        d = yaml.safe_load(f)
    w = d["power"]["l2_excess_w_per_v2ghz"]["value"]
    bytes_per_clock = d["latency"]["l2_bytes_per_clock"]["value"]
    return w / bytes_per_clock * 1e-9


def sm_kernels(dvfsim, tmp, stem):
    """The SM kernels of a capture's trace (converted once per stem)."""
    if stem not in _SM_KERNELS:
        native = os.path.join(tmp, stem.replace("/", "_") + ".native")
        subprocess.run([dvfsim, "trace", "convert", os.path.join(ROOT, stem + ".kineto.json.gz"), "--out",
                        native, "--no-cache"], check=True, capture_output=True)
        _SM_KERNELS[stem] = [k for k in read_native(native) if k["cls"] not in ("memset", "memcpy")]
    return _SM_KERNELS[stem]


def same_base(k, r):
    return base_name(k["name"]) == base_name(r["kernel"])


def best_iteration_pairs(kernels, rows, iteration="iteration", keep=lambda k: True, same=same_base):
    """(kernel, ncu row) pairs, in launch order, of the iteration whose kept
    kernels agree best with the rows (ncu profiled one step)."""
    best = []
    for it in sorted({k[iteration] for k in kernels}):
        sel = [k for k in kernels if k[iteration] == it and keep(k)]
        pairs = [(k, r) for k, r in zip(sel, rows) if same(k, r)]
        if len(pairs) > len(best):
            best = pairs
    return best


def paired(dvfsim, tmp, stem, ncu, regex):
    """(kernel, ncu row) pairs of the iteration whose names agree best."""
    rx = re.compile(regex) if regex else None
    selected = lambda name: rx is None or rx.search(base_name(name))  # noqa: E731
    rows = [r for r in read_ncu_rows(os.path.join(ROOT, ncu)) if selected(r["kernel"])]
    return best_iteration_pairs(sm_kernels(dvfsim, tmp, stem), rows, keep=lambda k: selected(k["name"]))


def measured(r):
    """ncu's duration (ns), DRAM bytes and warp instructions of one row."""
    if "dram_bytes" in r:
        dram = float(r["dram_bytes"])
    else:
        dram = float(r["dram_read_bytes"]) + float(r.get("l2_write_bytes") or r["dram_write_bytes"])
    return float(r["duration_ns"]), dram, float(r["instructions"])


def fractions(d_ns, dram, inst):
    s = max(d_ns - FIXED_NS, 1) * 1e-9
    return dram / (s * DRAM_PEAK), inst / (s * ISSUE_PEAK)


def weighted_quantile(points, q):  # (weight, value)
    points = sorted(points, key=lambda p: p[1])
    target, acc = sum(w for w, _ in points) * q, 0.0
    for w, v in points:
        acc += w
        if acc >= target:
            return v
    return float("nan")


def weighted_median(points):  # (weight, value)
    return weighted_quantile(points, 0.5)


def aggregate(pairs, family):
    """Per family (family(kernel name)): kernels, ncu's duration, DRAM bytes and instructions,
    the annotation's bytes, instructions and FLOPs, and the last kernel's class/source."""
    agg = defaultdict(lambda: {"n": 0, "ns": 0.0, "dram": 0.0, "inst": 0.0, "ann_dram": 0.0, "ann_inst": 0.0,
                               "flops": 0.0, "origin": ""})
    for k, r in pairs:
        d, dram, inst = measured(r)
        a = agg[family(base_name(k["name"]))]
        a["n"] += 1; a["ns"] += d; a["dram"] += dram; a["inst"] += inst
        a["ann_dram"] += k["dram"]; a["ann_inst"] += k["instructions"]; a["flops"] += k["flops"]
        a["origin"] = f"{k['cls']}/{k['source']}"
    return sorted(agg.items(), key=lambda x: -x[1]["ns"])


def ratios(a):
    return f"{a['ann_dram'] / max(a['dram'], 1):5.2f}, {a['ann_inst'] / max(a['inst'], 1):5.2f}"


def families(title, pairs, only_class=None):
    print(f"{title}: {len(pairs)} kernels paired")
    print(f"  {'family':44s} {'n':>4s} {'ncu us':>9s} {'DRAM':>6s} {'issue':>6s}  bytes, instr. annotated/ncu")
    chosen = [(k, r) for k, r in pairs if not only_class or k["cls"] == only_class]
    for name, a in aggregate(chosen, lambda n: n)[:12]:
        dram_f, issue_f = fractions(a["ns"] - FIXED_NS * (a["n"] - 1), a["dram"], a["inst"])
        print(f"  {name[:44]:44s} {a['n']:4d} {a['ns'] / 1e3:9.1f} {dram_f:6.3f} {issue_f:6.3f}  "
              f"{ratios(a)}  {a['origin']}")


def conv_family(name):
    """cuDNN kernel family: the transforms, its SIMT convolutions, or a tensor-core pass."""
    if "ToNhwc" in name or "ToNchw" in name:
        return "transforms"
    if "convolve" in name and "sgemm" in name:
        return "SIMT " + name.split("_convolve")[0]
    for p in ("fprop", "dgrad", "wgrad"):
        if p in name:
            return "tensor " + p
    return name[:30]


def transforms_and_convolutions(title, pairs):
    print(f"{title}: {len(pairs)} kernels paired")
    print(f"  {'family':30s} {'n':>4s} {'ncu ms':>7s}  bytes, instr. annotated/ncu  ncu instr./FLOP")
    agg = aggregate(pairs, conv_family)
    for name, a in agg:
        per_flop = f"{a['inst'] / a['flops']:.3g}" if a["flops"] > 0 else "-"
        print(f"  {name:30s} {a['n']:4d} {a['ns'] / 1e6:7.2f}  {ratios(a)}            {per_flop}")
    tensor = [a for name, a in agg if name.startswith("tensor ")]
    if tensor:
        inst, flops = sum(a["inst"] for a in tensor), sum(a["flops"] for a in tensor)
        print(f"  tensor-core passes together: {inst:.4g} instructions / {flops:.4g} FLOPs = {inst / flops:.3g}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="dvfsim_ncu_") as tmp:
        pooled = []
        for tag, stem, ncu, regex in OTHER:
            pairs = paired(args.dvfsim, tmp, stem, ncu, regex)
            families(f"{tag} (class other)", pairs, "other")
            for k, r in pairs:
                if k["cls"] == "other":
                    d, dram, inst = measured(r)
                    pooled.append((tag, d, *fractions(d, dram, inst)))
        print(f"\nheld out, class other: {len(pooled)} kernels, {sum(p[1] for p in pooled) / 1e6:.2f} ms; "
              f"time-weighted median {weighted_median([(p[1], p[2]) for p in pooled]):.3f} of the DRAM peak, "
              f"{weighted_median([(p[1], p[3]) for p in pooled]):.3f} of the issue peak")
        for tag, *_ in OTHER:
            q = [p for p in pooled if p[0] == tag]
            print(f"  {tag:12s} {len(q):4d} kernels  DRAM {weighted_median([(p[1], p[2]) for p in q]):.3f}  "
                  f"issue {weighted_median([(p[1], p[3]) for p in q]):.3f}")
        print()
        for tag, stem, ncu, regex in FAMILIES:
            families(tag, paired(args.dvfsim, tmp, stem, ncu, regex))
        print()
        for tag, stem, ncu, regex in SIXTH:
            families(tag, paired(args.dvfsim, tmp, stem, ncu, regex))
        print("\nupsampling and roll alone on an H100 (heldout21)")
        for tag, stem, ncu, regex in HELDOUT21:
            families(tag, paired(args.dvfsim, tmp, stem, ncu, regex))
        print("\ncuDNN's layout transforms and convolutions, held out")
        for tag, stem, ncu, regex in TRANSFORMS:
            transforms_and_convolutions(tag, paired(args.dvfsim, tmp, stem, ncu, regex))
        print("\nthe tensor-core convolution rate tried (not kept), its fit")
        tag, stem, ncu, regex = TENSOR_CONV_FIT
        transforms_and_convolutions(tag, [(k, r) for k, r in paired(args.dvfsim, tmp, stem, ncu, regex)
                                          if k["cls"] == "conv"])
        print("\nvectorized_gather_kernel: ncu's instructions per annotated byte")
        for tag, stem, ncu in GATHER:
            pairs = [(k, r) for k, r in paired(args.dvfsim, tmp, stem, ncu, None)
                     if base_name(k["name"]) == "vectorized_gather_kernel"]
            inst = sum(measured(r)[2] for _, r in pairs)
            nbytes = sum(k["dram"] for k, _ in pairs)
            print(f"  {tag:24s} {len(pairs)} kernels  {inst:.4g} / {nbytes:.4g} = {inst / nbytes:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
