#!/usr/bin/env python3
"""Fit the L2 residency of memory-bound kernels (docs/calibration.md,
"Elementwise kernels in L2") on the `l2` rows of measurements_l2.csv.

  python3 models/calibration/h200/l2_fit.py [--check]

Each row is a CUDA graph of back-to-back z = x + y (fp32) on S MB tensors,
footprint F = 3 S, at 1980 MHz. Its power is the cmos model of
models/devices/h200.yaml with the calibrated coefficients as they are (idle,
busy, SIMT issue at the fp32 axpy row's measured instructions per byte, and
the DRAM term) except that a share h(F) of the bytes is served by L2 and draws
`l2_hit_dram_power` of a DRAM byte's power: h = 1 under `l2_resident_below`
x L2, 0 over `l2_resident_above` x L2, linear between. The three numbers are
chosen by least squares over a grid on the rows of S >= 8 MB (kernels of
4 us and longer; the 2 and 4 MB kernels last 1-2 us, where the calibration's
busy accounting, a full busy term over the profiled kernel time, does not
hold). --check: exit 1 unless h200.yaml holds the fitted values.
"""
import argparse
import csv
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    dev = yaml.safe_load(open(os.path.join(ROOT, "models", "devices", "h200.yaml")))
    pw = {k: v["value"] for k, v in dev["power"].items() if isinstance(v, dict)}
    lat = {k: v["value"] for k, v in dev["latency"].items() if isinstance(v, dict)}
    info = yaml.safe_load(open(os.path.join(HERE, "device_info_l2.json")))
    l2 = info["torch"]["l2_cache_size"]
    rows = list(csv.DictReader(open(os.path.join(HERE, "measurements_l2.csv"))))
    calib = {r["name"]: r for r in csv.DictReader(open(os.path.join(HERE, "measurements.csv")))}
    axpy = calib["ew_axpy_fp32"]
    inst_per_byte = float(axpy["instructions"]) / float(axpy["dram_bytes"])
    idle = float(next(r for r in rows if r["name"] == "idle_ctx")["mean_power_w"])
    adds = [r for r in rows if r["name"].startswith("l2_add_fp32_")]
    # Every row ran at one clock pair (the firmware's top clocks): the model's
    # terms at it, from the device file's voltage curve.
    clocks = {(float(r["core_mhz"]), float(r["memory_mhz"])) for r in adds}
    assert len(clocks) == 1, clocks
    (core_mhz, mem_mhz), = clocks
    pts = dev["voltage"]["points"]
    volts = next(v0 + (v1 - v0) * (core_mhz - f0) / (f1 - f0)
                 for (f0, v0), (f1, v1) in zip(pts, pts[1:]) if f0 <= core_mhz <= f1)
    v2f = volts ** 2 * core_mhz / 1e3
    fm = mem_mhz / 1e3
    bw = dev["memory"]["bandwidth_gbs"]["value"] * 1e9 * mem_mhz / dev["memory"]["bandwidth_memory_mhz"]["value"]
    issue = (dev["compute"]["sm_count"]["value"] * dev["compute"]["warp_schedulers_per_sm"]["value"]
             * core_mhz * 1e6)
    data = []
    for r in adds:
        mb = int(r["name"].rsplit("_", 1)[1][:-2])
        w, busy, b = float(r["window_s"]), float(r["busy_s"]), float(r["dram_bytes"])
        base = idle + v2f * (busy / w * pw["busy_w_per_v2ghz"] +
                             min(1.0, b * inst_per_byte / (w * issue)) * pw["simt_w_per_v2ghz"])
        data.append((mb, 3 * mb * 2 ** 20, w, b, float(r["mean_power_w"]), base))

    def pred(d, lo, hi, ratio):
        mb, f, w, b, _, base = d
        h = 1.0 if f <= lo * l2 else 0.0 if f >= hi * l2 else (hi * l2 - f) / ((hi - lo) * l2)
        return base + min(1.0, b * (1 - h + h * ratio) / (w * bw)) * pw["memory_active_w_per_ghz"] * fm

    fit = [d for d in data if d[0] >= 8]
    best = None
    for lo in [x / 100 for x in range(10, 90, 2)]:
        for hi in [x / 100 for x in range(int(lo * 100) + 2, 200, 2)]:
            for ratio in [x / 100 for x in range(0, 51)]:
                e = sum((pred(d, lo, hi, ratio) - d[4]) ** 2 for d in fit)
                if best is None or e < best[0]:
                    best = (e, lo, hi, ratio)
    e, lo, hi, ratio = best
    print(f"L2 {l2} B; fit on {len(fit)} rows: l2_resident_below {lo:.2f}, l2_resident_above "
          f"{hi:.2f}, l2_hit_dram_power {ratio:.2f}; rms {(e / len(fit)) ** 0.5:.1f} W")
    print("| S per tensor | footprint | measured W | model W, all DRAM | model W, L2 rule | error |")
    print("|---|---|---|---|---|---|")
    for d in data:
        p0 = pred(d, 0.0, 1e-9, 1.0)
        p1 = pred(d, lo, hi, ratio)
        mark = "" if d[0] >= 8 else " (not fitted)"
        print(f"| {d[0]} MB{mark} | {d[1] / 2 ** 20:.0f} MB | {d[4]:.1f} | {p0:.1f} | {p1:.1f} | "
              f"{100 * (p1 - d[4]) / d[4]:+.1f} % |")
    if a.check:
        want = {"l2_bytes": l2, "l2_resident_below": lo, "l2_resident_above": hi,
                "l2_hit_dram_power": ratio}
        bad = [k for k, v in want.items() if abs(float(lat.get(k, -1)) - v) > 1e-9]
        if bad:
            sys.exit(f"l2_fit: h200.yaml latency keys differ from the fit: {', '.join(bad)}")


if __name__ == "__main__":
    main()
