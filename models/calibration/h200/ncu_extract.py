#!/usr/bin/env python3
"""Turn the raw Nsight Compute output of run_ncu.sh into the files dvfsim reads.

  ncu_extract.py RAW_DIR

RAW_DIR holds micro.csv, micro.out, step_xl.csv (run_ncu.sh's $OUT). Writes:
  models/calibration/h200/ncu/{micro,step_xl}.csv.gz  the raw ncu CSVs, kept
  models/calibration/h200/instmix.csv                 per benchmark: kernels, instructions per
                                                      operation, cycles, pipes, DRAM bytes
  models/calibration/h200/measurements.csv            its `instructions` column (rewritten)
  traces/data/gpt3xl_h200_train_b4_t2048.ncu.csv.gz   the step's kernels, the trace sidecar

Benchmarks are split at the marker kernels (spin_kernel) that ncu_instmix.py
launches before each one. Instructions in a measurement window are the
instructions per operation times the operations in the window, i.e.
(instructions / nominal FLOPs per operation) x the window's FLOPs; the
duty-cycled GEMM rows use the 8192^3 GEMM's ratio; copies run on the copy
engines and execute no SM instructions.
Standard library only.
"""
import csv
import gzip
import io
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
RATIO_FROM = {"gemm_duty50": "gemm_bf16_m8192_n8192_k8192",
              "gemm_duty25": "gemm_bf16_m8192_n8192_k8192",
              "gemm_duty50_p137": "gemm_bf16_m8192_n8192_k8192",
              "gemm_duty25_p137": "gemm_bf16_m8192_n8192_k8192"}


def nominal_flops():
    """FLOPs per operation as microbench.py counted them, from its
    bench_details*.json (the main run first, the extra suite for the rest)."""
    out = {}
    for name in ("bench_details.json", "bench_details_extra.json"):
        with open(os.path.join(HERE, name)) as f:
            for bench, d in json.load(f)["benches"].items():
                if d.get("flops_per_op"):
                    out.setdefault(bench, d["flops_per_op"])
    return out


def read_ncu(path):
    with open(path) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"'))
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], rows[2:]  # rows[1]: units
    out = []
    for r in body:
        d = dict(zip(header, r))
        for k, v in list(d.items()):
            if "__" in k:
                try:
                    d[k] = float(v.replace(",", ""))
                except ValueError:
                    pass
        out.append(d)
    return out


def num(d, k):
    v = d.get(k, 0.0)
    return v if isinstance(v, float) else 0.0


def main():
    raw = sys.argv[1]
    ncu_dir = os.path.join(HERE, "ncu")
    os.makedirs(ncu_dir, exist_ok=True)
    for name in ("micro.csv", "step_xl.csv"):
        with open(os.path.join(raw, name), "rb") as s, \
                gzip.GzipFile(os.path.join(ncu_dir, name + ".gz"), "wb", mtime=0) as d:
            shutil.copyfileobj(s, d)

    # ---- microbenchmarks -----------------------------------------------------
    micro = read_ncu(os.path.join(raw, "micro.csv"))
    with open(os.path.join(raw, "micro.out")) as f:
        order = json.loads(f.read().split("ORDER ", 1)[1].splitlines()[0])
    groups = []
    for k in micro:
        if "spin_kernel" in k["Kernel Name"]:
            groups.append([])
        else:
            groups[-1].append(k)
    assert len(groups) == len(order), (len(groups), len(order))
    flops_per_op = nominal_flops()
    mix = {}
    for name, ks in zip(order, groups):
        s = lambda key: sum(num(k, key) for k in ks)
        cyc = s("sm__cycles_elapsed.avg")
        inst = s("sm__inst_executed.sum")
        mix[name] = {
            "name": name, "kernels": len(ks), "instructions_per_op": int(inst),
            "nominal_flops_per_op": flops_per_op.get(name, 0),
            "instructions_per_flop": inst / flops_per_op[name] if name in flops_per_op else 0.0,
            "duration_ns": int(s("gpu__time_duration.sum")), "sm_cycles": round(cyc, 1),
            "issue_utilisation": inst / (132 * 4 * cyc) if cyc else 0.0,
            "fma": int(s("sm__inst_executed_pipe_fma.sum")),
            "alu": int(s("sm__inst_executed_pipe_alu.sum")),
            "xu": int(s("sm__inst_executed_pipe_xu.sum")),
            "lsu": int(s("sm__inst_executed_pipe_lsu.sum")),
            "dram_bytes": int(s("dram__bytes_read.sum") + s("dram__bytes_write.sum")),
            "l2_bytes": int(s("lts__t_bytes.sum")),
        }
    cols = list(next(iter(mix.values())).keys())
    with open(os.path.join(HERE, "instmix.csv"), "w", newline="") as f:
        f.write("# Nsight Compute 2025.3.1 (--clock-control none) on the lent H200, one operation per "
                "benchmark after 3 warm-up operations: ncu_instmix.py / run_ncu.sh, raw in ncu/micro.csv.gz\n")
        w = csv.DictWriter(f, cols, lineterminator="\n")
        w.writeheader()
        for r in mix.values():
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})

    mpath = os.path.join(HERE, "measurements.csv")
    with open(mpath) as f:
        rows = list(csv.DictReader(f))
    header = [c for c in rows[0].keys() if c != "instructions"] + ["instructions"]
    for r in rows:
        src = RATIO_FROM.get(r["name"], r["name"])
        if r["class"] in ("idle", "deep_idle", "memcpy"):
            r["instructions"] = "0"
        elif src in mix:
            r["instructions"] = f"{mix[src]['instructions_per_flop'] * float(r['flops']):.6g}"
        else:
            r["instructions"] = ""
    with open(mpath + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(mpath + ".tmp", mpath)

    # ---- the training step: the trace sidecar --------------------------------
    step = [k for k in read_ncu(os.path.join(raw, "step_xl.csv"))
            if "spin_kernel" not in k["Kernel Name"]]
    side = os.path.join(ROOT, "traces", "data", "gpt3xl_h200_train_b4_t2048.ncu.csv.gz")
    with gzip.GzipFile(side + ".tmp", "wb", mtime=0) as raw, \
            io.TextIOWrapper(raw, newline="") as f:
        f.write("# SM kernels of one GPT-3-XL training step (batch 4, sequence 2048, bf16 autocast, "
                "fused AdamW) in launch order, measured with Nsight Compute 2025.3.1 on the lent H200 "
                "(--clock-control none, application replay, caches not flushed): "
                "models/calibration/h200/run_ncu.sh; raw in models/calibration/h200/ncu/step_xl.csv.gz\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["kernel", "grid", "block", "registers", "duration_ns", "sm_cycles",
                    "instructions", "dram_bytes"])
        for k in step:
            w.writerow([k["Kernel Name"], int(num(k, "launch__grid_size")),
                        int(num(k, "launch__block_size")),
                        int(num(k, "launch__registers_per_thread")),
                        int(num(k, "gpu__time_duration.sum")),
                        round(num(k, "sm__cycles_elapsed.avg"), 1),
                        int(num(k, "sm__inst_executed.sum")),
                        int(num(k, "dram__bytes_read.sum") + num(k, "dram__bytes_write.sum"))])
    os.replace(side + ".tmp", side)
    print(f"{len(mix)} benchmarks, {len(step)} step kernels")


if __name__ == "__main__":
    main()
