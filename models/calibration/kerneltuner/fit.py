#!/usr/bin/env python3
"""Fit the low-clock physics of the cmos power model to the two Kernel Tuner
clock sweeps in this directory, and write their one-kernel native traces.

Physics (docs/calibration.md, "Frequency response"): for one compute-bound
kernel at core clock f (GHz) and a fixed memory clock,

    P(f) = B + L*V(f) + K*V(f)^2*f

B: board and memory power, independent of the SM clock (const_w +
memory_idle_w_per_ghz x fm); L: leakage per volt (leak_w_per_v); K: the
switched capacitance of the clock tree plus this kernel's activity (clock +
busy + u_s x simt, in W/(V^2 GHz)). V(f) is the alpha-power law of a CMOS
path, f ~ (V - Vth)^alpha / V (Sakurai-Newton), anchored at (f_top, V_top),
and never below a floor V_floor (SRAM retention / minimum operating voltage):
flat below the knee where the law reaches the floor.

B and K are linear given V(f) (least squares on relative error); V_floor, Vth
and alpha are a grid search. L is fixed per die (an assumption: it is not
identifiable from one kernel's sweep, and the fit quality barely depends on
it, see --leak-scan). Rows where the GPU did not hold the requested clock
(the A4000's power-capped 2100/1905 MHz requests) are not fitted: they test
the firmware cap.

Honest errors: two-fold cross-validation (fit on the even rows, predict the
odd ones, and the reverse) is printed as the held-out error; the shipped
coefficients are the fit on every uncapped row.

Usage: fit.py [--write-traces DIR] [--leak-scan]
Needs python3-numpy.
"""
import argparse
import csv
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# The H200 calibration's split of the core terms (models/devices/h200.yaml,
# calibrated): clock tree, any kernel busy, SIMT issue at full rate, tensor at peak.
H200_CLOCK, H200_BUSY, H200_SIMT, H200_TENSOR = 7.68481, 96.2922, 148.854, 441.604

SWEEPS = {
    "a100pcie40": dict(
        csv="kerneltuner-a100pcie40-fp32-freqsweep.csv",
        clock_col="core_freq_MHz", req_col="gr_clock_MHz",
        device="a100-pcie-40gb", device_name="NVIDIA A100-PCIE-40GB",
        f_top=1410, v_top=1.0,  # assumption: no voltage readout on GA100
        leak=20.0,  # assumption: W/V for the 826 mm2 GA100
        memory_mhz=1215, sms=108, grid=(108, 64),
        fp32_lanes_per_scheduler=16,  # 64 FP32 lanes per GA100 SM, 4 schedulers
        capture_row=1410,
    ),
    "a4000": dict(
        csv="kerneltuner-rtxa4000-fp32-freqsweep.csv",
        clock_col="core_freq_MHz", req_col="requested_MHz",
        device="rtx-a4000", device_name="NVIDIA RTX A4000",
        f_top=1965, v_top=1.081,  # read: RTX 3060 Ti (GA104) 1965 MHz at 1.081 V
        leak=10.0,  # assumption: W/V for the 392 mm2 GA104, GA100's 20 by die area
        memory_mhz=7001, sms=48, grid=(48, 64),
        fp32_lanes_per_scheduler=32,  # 128 FP32 lanes per GA10x SM
        capture_row=1710,
    ),
}

THREADS_PER_BLOCK = 1024
FMA_PER_THREAD = 64 * 1024 * 4  # nr_outer x nr_inner x 4 FMAs (kernel_tuner energy.py)


def load(path, clock_col, req_col):
    rows = []
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        rows.append(dict(req=float(r[req_col]), f=float(r[clock_col]),
                         t_ms=float(r["time_ms"]), p=float(r["nvml_power_W"]),
                         e=float(r["energy_J_per_run"])))
    return rows


def volts(f, f_top, v_top, v_floor, vth, alpha):
    """V(f): the alpha-power law through (f_top, v_top), floored at v_floor."""
    g = lambda v: (v - vth) ** alpha / v
    k = f_top / g(v_top)
    lo, hi = vth + 1e-9, 2.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if k * g(mid) < f:
            lo = mid
        else:
            hi = mid
    return max(v_floor, hi)


def knee(f_top, v_top, v_floor, vth, alpha):
    g = lambda v: (v - vth) ** alpha / v
    return f_top * g(v_floor) / g(v_top)


def lsq(rows, shape, cfg):
    f = np.array([r["f"] for r in rows])
    p = np.array([r["p"] for r in rows])
    v = np.array([volts(x, cfg["f_top"], cfg["v_top"], *shape) for x in f])
    y = p - cfg["leak"] * v
    X = np.stack([np.ones_like(f), v * v * f / 1000.0], 1)
    w = 1.0 / p  # relative error
    c, *_ = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)
    return c


def predict(rows, shape, c, cfg):
    out = []
    for r in rows:
        v = volts(r["f"], cfg["f_top"], cfg["v_top"], *shape)
        out.append(c[0] + cfg["leak"] * v + c[1] * v * v * r["f"] / 1000.0)
    return out


def fit(rows, cfg):
    best = None
    for v_floor in np.arange(0.50, 0.95, 0.005):
        for vth in np.arange(0.15, 0.55, 0.02):
            if v_floor <= vth + 0.05:
                continue
            for alpha in (1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0):
                shape = (float(v_floor), float(vth), alpha)
                c = lsq(rows, shape, cfg)
                if (c < 0).any():
                    continue
                pred = predict(rows, shape, c, cfg)
                rms = math.sqrt(sum((q / r["p"] - 1) ** 2 for q, r in zip(pred, rows)) / len(rows))
                if best is None or rms < best[0]:
                    best = (rms, shape, c)
    return best[1], best[2]


def native_trace(cfg, row, instructions, flops):
    dur_ns = int(round(row["t_ms"] * 1e6))
    gx, gy = cfg["grid"]
    return "\n".join([
        "# dvfsim-trace v2",
        f"device={cfg['device']}",
        f"device_name={cfg['device_name']}",
        f"core_mhz={int(row['f'])}",
        f"memory_mhz={cfg['memory_mhz']}",
        "clocks_source=Kernel Tuner cache (models/calibration/kerneltuner/" + cfg["csv"] + ")",
        "instructions_source=inferred from the kernel source: warps x 262144 FFMA per thread",
        "iterations=1",
        "@names 2",
        "0\t",
        "1\tfp32_kernel",
        "@kernels 1",
        "# name_id op_id stream device grid_x grid_y grid_z block_x block_y block_z "
        "registers_per_thread shared_memory_bytes host_launch_ns traced_start_ns class phase "
        "iteration layer duration_ns flops dram_bytes work_source instructions instructions_source",
        "\t".join(str(x) for x in [1, 0, 7, 0, gx, gy, 1, THREADS_PER_BLOCK, 1, 1, 0, 0, 0, 10000,
                                   "other", "forward", 0, -1, dur_ns, repr(flops), 0, "shapes",
                                   repr(instructions), "estimated"]),
        "@syncs 0",
        "# kind host_begin_ns traced_end_ns waits_until_kernel stream",
        "@event_waits 0",
        "# kernel after",
        "@iteration_begin 2",
        "0",
        "1",
        "@end",
        "",
    ])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write-traces", metavar="DIR")
    ap.add_argument("--leak-scan", action="store_true")
    args = ap.parse_args()
    for name, cfg in SWEEPS.items():
        rows = load(os.path.join(HERE, cfg["csv"]), cfg["clock_col"], cfg["req_col"])
        held = [r for r in rows if abs(r["f"] - r["req"]) <= 1]
        capped = [r for r in rows if abs(r["f"] - r["req"]) > 1]
        print(f"== {name}: {len(held)} rows at the requested clock, {len(capped)} capped")
        if args.leak_scan:
            base = cfg["leak"]
            for leak in (0.0, base / 2, base, 2 * base):
                cfg["leak"] = leak
                shape, c = fit(held, cfg)
                pred = predict(held, shape, c, cfg)
                err = max(abs(q / r["p"] - 1) for q, r in zip(pred, held))
                print(f"  leak {leak:5.1f} W/V: max error {100*err:.2f} %, knee "
                      f"{knee(cfg['f_top'], cfg['v_top'], *shape):.0f} MHz")
            cfg["leak"] = base
        # Two-fold cross-validation.
        worst = 0.0
        for fold in (0, 1):
            train = [r for i, r in enumerate(held) if i % 2 == fold]
            test = [r for i, r in enumerate(held) if i % 2 != fold]
            shape, c = fit(train, cfg)
            for q, r in zip(predict(test, shape, c, cfg), test):
                e = q / r["p"] - 1
                worst = max(worst, abs(e))
                print(f"  held out (fold {fold}) {r['f']:6.0f} MHz: measured {r['p']:7.2f} W, "
                      f"predicted {q:7.2f} W ({100*e:+.2f} %)")
        print(f"  held-out max error {100*worst:.2f} %")
        shape, c = fit(held, cfg)
        v_floor, vth, alpha = shape
        fk = knee(cfg["f_top"], cfg["v_top"], *shape)
        pred = predict(held, shape, c, cfg)
        fit_err = max(abs(q / r["p"] - 1) for q, r in zip(pred, held))
        print(f"  shipped fit (all {len(held)} rows): B {c[0]:.3f} W, K {c[1]:.3f} W/(V2 GHz), "
              f"leak {cfg['leak']} W/V; V_floor {v_floor:.3f} V, Vth {vth:.2f} V, alpha {alpha}; "
              f"knee {fk:.0f} MHz; max in-sample error {100*fit_err:.2f} %")
        # The V(f) points for the device file: the floor, the knee, then every
        # 45 MHz of the law (linear interpolation between them is within 1 mV).
        f_min = 210
        f_max = 2100 if name == "a4000" else 1410
        knee_mhz = int(math.ceil(fk / 15.0) * 15)
        pts = [(f_min, v_floor), (knee_mhz, v_floor)]
        f = knee_mhz + 45
        while f < f_max:
            pts.append((f, volts(f, cfg["f_top"], cfg["v_top"], *shape)))
            f += 45
        pts.append((f_max, volts(f_max, cfg["f_top"], cfg["v_top"], *shape)))
        print("  voltage points: [" + ", ".join(f"[{a}, {b:.3f}]" for a, b in pts) + "]")
        warps = cfg["grid"][0] * cfg["grid"][1] * THREADS_PER_BLOCK // 32
        instructions = float(warps * FMA_PER_THREAD)
        flops = float(cfg["grid"][0] * cfg["grid"][1] * THREADS_PER_BLOCK * FMA_PER_THREAD * 2)
        cap = next(r for r in rows if r["req"] == cfg["capture_row"])
        u_s = instructions / (cfg["sms"] * 4 * cap["f"] * 1e6 * cap["t_ms"] * 1e-3)
        k = c[1] / (H200_CLOCK + H200_BUSY + u_s * H200_SIMT)
        print(f"  SIMT issue utilisation u_s {u_s:.3f} (FFMA issue limit "
              f"{cfg['fp32_lanes_per_scheduler']/32:.2f}); K split in the H200's proportions "
              f"(x{k:.4f}): clock {k*H200_CLOCK:.2f}, busy {k*H200_BUSY:.2f}, "
              f"simt {k*H200_SIMT:.2f}, tensor {k*H200_TENSOR:.2f}")
        if args.write_traces:
            path = os.path.join(args.write_traces, f"kerneltuner_fp32_{cfg['device']}.dvfsim")
            with open(path, "w") as out:
                out.write(native_trace(cfg, cap, instructions, flops))
            print(f"  wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
