#!/usr/bin/env python3
"""Compare dvfsim's work annotation with Nsight Compute, kernel by kernel.

  ncu_compare.py TRACE.native NCU_KERNELS.csv.gz [--iteration I] [--worst N] [--prefix]

TRACE.native: `dvfsim trace convert` of the capture (its kernels carry the
annotated flops and dram_bytes); NCU_KERNELS: ncu_reduce.py's output for one
step of the same workload. The SM kernels of iteration I (memsets and
memcpys run on the copy engines and are not in ncu's list) are paired with
the ncu rows in launch order; a pair whose kernel base names differ stops the
comparison. Memory-bound kernels are those of the classes other than gemm
and attention; their GPU time is ncu's duration. Prints the share of
memory-bound GPU time whose annotated DRAM bytes are within 30 % of the
reference, the same for all kernels, and the worst kernels by the GPU time
they put outside the band.

The reference (--reference): `dram` is ncu's DRAM read + write bytes;
`compulsory` is its DRAM reads plus the bytes the SMs wrote into L2
(`l2_write_bytes`, from runs that measured it). ncu flushes L2 before each
kernel, so every read of a kernel reaches DRAM and its DRAM reads are its
compulsory reads; but its writes sit in L2 when it ends and only the lines
evicted during the kernel reach DRAM, none at all for outputs under ~20 MB
(docs/validation.md). What the SMs wrote into L2 is the traffic a write
costs once it is evicted, which is what the annotation counts. `auto`
(default): compulsory where the column exists, else dram.
"""
import argparse
import csv
import gzip
import sys
from collections import defaultdict

MEMORY_BOUND = {"elementwise", "reduction", "norm", "optimizer", "other"}


def base_name(n):
    """Function name without return type, namespaces, template arguments and
    parameters (Kineto's and Nsight's spellings agree on it; the rule of
    kernel_base_name in traces/instructions.cpp). Nsight Compute spells an
    anonymous namespace "<unnamed>::" (2025.3: "unnamed>::"): a '<' at the
    start of a path component opens that namespace, not a template."""
    n = n.replace("(anonymous namespace)::", "")
    if n.startswith("void "):
        n = n[5:]
    end = 0
    while end < len(n) and n[end] != "(":
        if n[end] == "<":
            if (end == 0 or n[end - 1] == ":") and n.startswith("<unnamed>::", end):
                end += len("<unnamed>::")
                continue
            break
        end += 1
    head = n[:end].split()  # a return type other than void, if any
    return head[-1].split("::")[-1] if head else ""


def read_ncu_rows(path):
    """The rows (dicts by column) of an Nsight Compute table as ncu_reduce.py
    writes it (gzipped CSV, '#' lines of provenance before the header)."""
    with gzip.open(path, "rt") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def read_native(path):
    op = gzip.open if path.endswith(".gz") else open
    names, kernels, sec = [], [], None
    with op(path, "rt") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("@"):
                sec = line.split()[0]
                continue
            if sec == "@names":
                i, _, n = line.partition("\t")
                names.append(n)
            elif sec == "@kernels":
                f_ = line.split("\t")
                kernels.append({"name": names[int(f_[0])], "cls": f_[14], "iteration": int(f_[16]),
                                "dur": int(f_[18]), "flops": float(f_[19]), "dram": float(f_[20]),
                                "source": f_[21], "instructions": float(f_[22]),
                                "l2_excess": float(f_[25]) if len(f_) > 25 else 0.0})
    return kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("native")
    ap.add_argument("ncu")
    ap.add_argument("--iteration", type=int, default=0)
    ap.add_argument("--worst", type=int, default=8)
    ap.add_argument("--band", type=float, default=0.30)
    ap.add_argument("--reference", choices=("auto", "dram", "compulsory"), default="auto")
    ap.add_argument("--prefix", action="store_true",
                    help="ncu stopped early (a timeout): pair its rows with the first kernels only")
    a = ap.parse_args()
    ks = [k for k in read_native(a.native)
          if k["iteration"] == a.iteration and k["cls"] not in ("memset", "memcpy")]
    rows = read_ncu_rows(a.ncu)
    has_l2w = bool(rows) and "l2_write_bytes" in rows[0]
    ref = a.reference if a.reference != "auto" else ("compulsory" if has_l2w else "dram")
    if ref == "compulsory" and not has_l2w:
        sys.exit(f"{a.ncu}: no l2_write_bytes column (a run without "
                 "lts__t_sectors_srcunit_tex_op_write.sum); use --reference dram")
    if a.prefix and len(rows) < len(ks):
        print(f"prefix: the first {len(rows)} of {len(ks)} SM kernels of iteration {a.iteration}")
        ks = ks[: len(rows)]
    if len(ks) != len(rows):
        sys.exit(f"{a.native}: {len(ks)} SM kernels in iteration {a.iteration}, {a.ncu}: {len(rows)} rows")
    tot = defaultdict(float)
    worst = defaultdict(lambda: [0.0, 0, 0.0, 0.0, ""])
    for k, r in zip(ks, rows):
        a_, b_ = base_name(k["name"]), base_name(r["kernel"])
        mangled = a_.startswith("_Z") or b_.startswith("_Z")  # Kineto may keep a mangled name
        if (a_ != b_ and not (mangled and (b_ in a_ or a_ in b_))) or (
                mangled and int(r["block"]) <= 0):
            sys.exit(f"kernel {base_name(k['name'])} paired with ncu row {base_name(r['kernel'])}")
        t = float(r["duration_ns"])
        writes = float(r["l2_write_bytes"] if ref == "compulsory" else r["dram_write_bytes"])
        meas = float(r["dram_read_bytes"]) + writes
        ok = meas > 0 and abs(k["dram"] / meas - 1) <= a.band
        mb = k["cls"] in MEMORY_BOUND
        tot["all"] += t
        tot["all_ok"] += t if ok else 0
        if mb:
            tot["mb"] += t
            tot["mb_ok"] += t if ok else 0
            if not ok:
                w = worst[(base_name(k["name"]), k["cls"])]
                w[0] += t; w[1] += 1; w[2] += k["dram"]; w[3] += meas; w[4] = k["source"]
        tot["ncu_flops_fp32"] += float(r["fp32_flops"])
    print(f"{a.native}: {len(ks)} kernels, GPU time {tot['all']/1e6:.2f} ms (ncu), "
          f"memory-bound {tot['mb']/1e6:.2f} ms; reference: {ref}")
    print(f"  memory-bound GPU time with DRAM bytes within {a.band:.0%} of the reference: "
          f"{100*tot['mb_ok']/max(tot['mb'],1):.1f} %   (all kernels: {100*tot['all_ok']/max(tot['all'],1):.1f} %)")
    for (n, c), w in sorted(worst.items(), key=lambda x: -x[1][0])[:a.worst]:
        print(f"  outside: {n[:60]:60s} {c:11s} {w[1]:4d} k {w[0]/1e6:7.3f} ms  annotated/ncu {w[2]/max(w[3],1):6.2f}  ({w[4]})")


if __name__ == "__main__":
    main()
