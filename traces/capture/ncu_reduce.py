#!/usr/bin/env python3
"""Reduce a raw Nsight Compute CSV (ncu --csv --page raw, as run_h200_ncu.sh
writes it) to one compact row per kernel, in launch order.

  ncu_reduce.py RAW.csv OUT.csv.gz

Columns: kernel (demangled, as ncu prints it), grid (blocks), block (threads),
registers, duration_ns, dram_read_bytes, dram_write_bytes, l2_bytes,
instructions (sm__inst_executed.sum), fp32_flops (2 x FFMA + FADD + FMUL thread
instructions), and where the run measured them l2_write_bytes (bytes the SMs
wrote into L2, 32 x lts__t_sectors_srcunit_tex_op_write.sum) and
l2_read_miss_bytes (SM reads that missed L2, 32 x
lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum), and the warp instructions
per pipe (pipe_fma, pipe_alu, pipe_xu, pipe_lsu, pipe_fp16, pipe_uniform:
sm__inst_executed_pipe_*.sum, run_h200_ncu.sh with NCU_PIPES=1). The first five columns are the instruction sidecar's
(docs/trace-format.md), so the file can also serve as `<stem>.ncu.csv.gz`.
Standard library only.
"""
import csv
import gzip
import io
import sys

COLS = {"duration_ns": "gpu__time_duration.sum", "dram_read_bytes": "dram__bytes_read.sum",
        "dram_write_bytes": "dram__bytes_write.sum", "l2_bytes": "lts__t_bytes.sum",
        "instructions": "sm__inst_executed.sum"}
SECTORS = {"l2_write_bytes": "lts__t_sectors_srcunit_tex_op_write.sum",
           "l2_read_miss_bytes": "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum"}
PIPES = {f"pipe_{p}": f"sm__inst_executed_pipe_{p}.sum"
         for p in ("fma", "alu", "xu", "lsu", "fp16", "uniform")}
FP = ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "sm__sass_thread_inst_executed_op_fmul_pred_on.sum")


def num(s):
    s = (s or "").replace(",", "").strip()
    return float(s) if s not in ("", "n/a") else 0.0


def read(path):
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        raise SystemExit(f"{path}: no ncu CSV header (\"ID\",...) found")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    out = []
    for r in rows[2:]:  # rows[1]: units
        if len(r) != len(header):
            continue
        d = dict(zip(header, r))
        row = {"kernel": d["Kernel Name"], "grid": int(num(d["launch__grid_size"])),
               "block": int(num(d["launch__block_size"])),
               "registers": int(num(d["launch__registers_per_thread"]))}
        for k, m in COLS.items():
            row[k] = num(d.get(m))
        for k, m in SECTORS.items():
            if m in d:
                row[k] = 32 * num(d[m])
        for k, m in PIPES.items():
            if m in d:
                row[k] = num(d[m])
        ffma, fadd, fmul = (num(d.get(m)) for m in FP)
        row["fp32_flops"] = 2 * ffma + fadd + fmul
        out.append(row)
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    rows = read(sys.argv[1])
    keys = ["kernel", "grid", "block", "registers", "instructions", "duration_ns",
            "dram_read_bytes", "dram_write_bytes", "l2_bytes", "fp32_flops"]
    keys += [k for k in (*SECTORS, *PIPES) if rows and k in rows[0]]
    with gzip.open(sys.argv[2], "wt", newline="") as g:
        g.write(f"# Nsight Compute (--clock-control none, caches flushed per kernel), one step; "
                f"reduced by traces/capture/ncu_reduce.py from {sys.argv[1].split('/')[-1]}\n")
        w = csv.writer(g, lineterminator="\n")
        w.writerow(keys)
        for r in rows:
            w.writerow([r[k] if not isinstance(r[k], float) else f"{r[k]:.0f}" for k in keys])
    print(f"{sys.argv[2]}: {len(rows)} kernels")


if __name__ == "__main__":
    main()
