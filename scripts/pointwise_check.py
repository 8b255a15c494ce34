#!/usr/bin/env python3
"""Which operators still rest on the work fallback, and how the pointwise and
reduction rules compare with Nsight Compute: the figures of
docs/validation.md, "Pointwise operators under their own names".

First, over every capture of scripts/validation_table.py, the share of the
predicted kernel energy whose work is the duration fallback (not shapes),
with the three largest operators of each, and those operators summed over
the captures. Then, for the captures with Nsight Compute on every kernel of
one step, per operator of the rules (ReLU's clamp, hard swish and sigmoid,
dropout's backward, comparisons and tests, argmax, all, any, cumsum): ncu's
time and DRAM traffic (reads plus what the SMs wrote into L2) and the
annotation's bytes and warp instructions over ncu's. The kernels of the
iteration whose names agree best with the ncu rows are paired in launch
order. Last, the held-out check on two H100 captures whose clamp and hard
activation kernels alone were measured (validation/h100/heldout20/, device
h100-sxm), per functor, and the same VGG-16 step's pooling and reduction
kernels, per kernel family.

  python3 scripts/pointwise_check.py [--dvfsim build/apps/dvfsim] [--ops REGEX]
"""
import argparse
import collections
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "traces", "capture"))
from ncu_compare import base_name, read_ncu_rows  # noqa: E402
from ncu_utilisation import best_iteration_pairs, measured, same_base  # noqa: E402
from validation_table import CAPTURES  # noqa: E402

H, C = "validation/h200/heldout/", "validation/h200/classes/"
NCU = [  # (tag, trace stem, Nsight Compute on every kernel of one step)
    ("ResNet-50", C + "resnet50_train_b128", C + "resnet50_train_b128.ncu_kernels.csv.gz"),
    ("MobileNetV3", H + "mobilenetv3_train_b128", H + "mobilenetv3_train_b128.ncu_kernels.csv.gz"),
    ("T5-small", H + "t5small_train_b16_t512", H + "t5small_train_b16_t512.ncu_kernels.csv.gz"),
    ("GPT-2 b8", H + "gpt2_hf_train_b8_t1024", H + "gpt2_hf_train_b8_t1024.ncu_kernels.csv.gz"),
]
OPS = (r"clamp_min|hardswish|hardtanh|hardsigmoid|dropout_backward|isneginf|aten::(all|any|eq|argmax|"
       r"cumsum)$|threshold_backward")


def kernels(dvfsim, tmp, stem, device="h200"):
    """The SM kernels of a capture with their operator, class, work source and work."""
    out = os.path.join(tmp, stem.replace("/", "_"))
    subprocess.run([dvfsim, "run", "--trace", os.path.join(ROOT, stem + ".kineto.json.gz"), "--device", device,
                    "--policy", "native", "--baseline", "none", "--out", out, "--outputs", "kernels"],
                   check=True, capture_output=True)
    with open(os.path.join(out, "names.csv")) as f:
        rows = csv.reader(f)
        next(rows)
        names = {r[0]: r[1] for r in rows}
    with open(os.path.join(out, "kernels.csv")) as f:
        return [{"name": names[k["name_id"]], "op": names.get(k["operator_id"], ""), "it": int(k["iteration"]),
                 "cls": k["class"], "src": k["work_source"], "dram": float(k["dram_bytes"]),
                 "inst": float(k["instructions"]), "energy": float(k["energy_j"])}
                for k in csv.DictReader(f) if k["class"] not in ("memset", "memcpy")]


def fallback_shares(dvfsim, tmp):
    print("Share of the predicted kernel energy on the duration fallback, largest operators:")
    total = collections.Counter()
    for label, stem, _, _ in CAPTURES:
        ks = kernels(dvfsim, tmp, stem)
        energy = sum(k["energy"] for k in ks) or 1.0
        per_op = collections.Counter()
        for k in ks:
            if k["src"] == "fallback":
                per_op[(k["cls"], k["op"] or "(no operator)")] += k["energy"] / energy
        top = ", ".join(f"{op} {100 * s:.1f} %" for (_, op), s in per_op.most_common(3) if s >= 0.005)
        print(f"  {100 * sum(per_op.values()):5.1f} %  {label}{'  (' + top + ')' if top else ''}")
        total.update(per_op)
    print("Operators on the fallback, shares summed over the captures:")
    for (cls, op), s in total.most_common(15):
        print(f"  {100 * s:6.1f}  {op} ({cls})")


def paired(ks, rows, keep=lambda k: True, same=same_base):
    """(kernel, ncu row) pairs of the iteration whose kept kernels agree best."""
    return best_iteration_pairs(ks, rows, "it", keep, same)


def aggregate(pairs, key):
    """Per key(kernel, row): kernels, ncu's ns, DRAM bytes and instructions,
    the annotation's bytes and instructions, and the last kernel's work source."""
    agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0, ""])
    for k, r in pairs:
        d, dram, inst = measured(r)
        a = agg[key(k, r)]
        a[0] += 1; a[1] += d; a[2] += dram; a[3] += inst; a[4] += k["dram"]; a[5] += k["inst"]; a[6] = k["src"]
    return sorted(agg.items(), key=lambda x: -x[1][1])


def row(name, a, width=30):
    """name, kernels, ncu us, DRAM MB, annotated over ncu bytes and instructions."""
    return (f"{name:{width}s} {a[0]:3d} {a[1] / 1e3:7.0f} {a[2] / 1e6:8.1f} {a[4] / max(a[2], 1):6.2f} "
            f"{a[5] / max(a[3], 1):6.2f}")


def against_ncu(dvfsim, tmp, ops):
    print("Annotation against Nsight Compute, per operator:")
    rx = re.compile(ops)
    for tag, stem, ncu in NCU:
        ks, rows = kernels(dvfsim, tmp, stem), read_ncu_rows(os.path.join(ROOT, ncu))
        pairs = paired(ks, rows)
        print(f"  {tag} ({len(pairs)} of {len(rows)} rows paired)")
        print(f"    {'operator':30s} {'n':>3s} {'ncu us':>7s} {'DRAM MB':>8s} {'bytes':>6s} {'instr.':>6s}  work")
        for op, a in aggregate([(k, r) for k, r in pairs if rx.search(k["op"])], lambda k, r: k["op"]):
            print(f"    {row(op, a)}  {a[6]}")


H20 = "validation/h100/heldout20/"
HELD_OUT = [  # (trace stem, ncu of the pointwise kernels alone, the functors they hold)
    (H20 + "mobilenetv3_small_train_b256", H20 + "ncu_pointwise_mobilenetv3_small_train_b256.subset.csv.gz",
     ("hardswish_backward", "hardswish", "hardsigmoid_backward", "hardsigmoid", "clamp")),
    (H20 + "vgg16_train_b64_adamw", H20 + "ncu_pointwise_vgg16_train_b64_adamw.subset.csv.gz",
     ("clamp", "threshold")),
]


def held_out(dvfsim, tmp):
    print("Held out (validation/h100/heldout20/, h100-sxm), per functor:")
    for stem, ncu, functors in HELD_OUT:
        def functor(name):
            return next((f for f in functors if f in name), None)
        ks, rows = kernels(dvfsim, tmp, stem, "h100-sxm"), read_ncu_rows(os.path.join(ROOT, ncu))
        pairs = paired(ks, rows, lambda k: functor(k["name"]), lambda k, r: functor(k["name"]) == functor(r["kernel"]))

        def width(k, r):
            v = re.search(r"vectorized_elementwise_kernel<(\d+)", r["kernel"])
            return functor(k["name"]), v.group(1) if v else "strided"
        print(f"  {os.path.basename(stem)} ({len(pairs)} of {len(rows)} rows paired)")
        print(f"    {'functor':22s} {'<V>':>7s} {'n':>3s} {'ncu us':>7s} {'DRAM MB':>8s} {'bytes':>6s} {'instr.':>6s}")
        for (f, v), a in aggregate(pairs, width):
            print(f"    {row(f'{f:22s} {v:>7s}', a)}")


def vgg_pooling(dvfsim, tmp):
    stem, ncu = H20 + "vgg16_train_b64_adamw", H20 + "ncu_vgg16_train_b64_adamw.subset.csv.gz"
    ks, rows = kernels(dvfsim, tmp, stem, "h100-sxm"), read_ncu_rows(os.path.join(ROOT, ncu))
    names = {base_name(r["kernel"]) for r in rows}
    pairs = paired(ks, rows, lambda k: base_name(k["name"]) in names)
    print(f"  VGG-16's pooling and reductions ({len(pairs)} of {len(rows)} rows paired)")
    for f, a in aggregate(pairs, lambda k, r: base_name(k["name"])):
        print(f"    {row(f, a)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build/apps/dvfsim"))
    ap.add_argument("--ops", default=OPS, help="operators to compare with Nsight Compute (regex)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        fallback_shares(args.dvfsim, tmp)
        against_ncu(args.dvfsim, tmp, args.ops)
        held_out(args.dvfsim, tmp)
        vgg_pooling(args.dvfsim, tmp)


if __name__ == "__main__":
    main()
