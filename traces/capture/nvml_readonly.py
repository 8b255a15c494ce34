"""Read-only NVML access shared by dvfsim's capture and calibration scripts.

Only query functions (``nvmlDeviceGet*`` / ``nvmlSystemGet*``) are ever called:
clocks, power limits, persistence and MIG settings are never changed.

Contents
- ``Gpu``: a device handle with the few readings the scripts need and a
  ``device_info()`` snapshot for provenance.
- ``Sampler``: a background thread that polls NVML every ``period_s`` and keeps
  rows ``(t, energy_mJ, power_avg_mW, power_instant_mW, sm_mhz, mem_mhz,
  reasons, temp_c, phase)``; ``t`` is ``time.perf_counter()`` taken just before
  the energy counter is read.
- Window helpers working on those rows: energy-counter ticks, energy
  interpolation, time-weighted means and percentiles.

The NVML energy counter, the power readings and the clock readings refresh
about every 100 ms on an H200. Energy windows are therefore cut at counter
ticks (the instant the counter was seen to change), or the counter is
interpolated linearly between ticks.

Pure Python (no numpy) so that the window logic can be tested anywhere.
"""
import ctypes
import threading
import time

try:  # pynvml is the module name of the nvidia-ml-py package
    import pynvml as nv
except ImportError:  # pragma: no cover - only the window helpers are usable
    nv = None

# nvmlClocksEventReasons bits (nvml.h).
REASON_BITS = {
    0x1: "GpuIdle",
    0x2: "ApplicationsClocksSetting",
    0x4: "SwPowerCap",
    0x8: "HwSlowdown",
    0x10: "SyncBoost",
    0x20: "SwThermalSlowdown",
    0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown",
    0x100: "DisplayClockSetting",
}
FI_DEV_POWER_INSTANT = 186  # NVML_FI_DEV_POWER_INSTANT

SAMPLE_COLUMNS = ("t", "energy_mJ", "power_avg_mW", "power_instant_mW",
                  "sm_mhz", "mem_mhz", "reasons", "temp_c", "phase")
T, E, PAVG, PINST, SM, MEM, REASONS, TEMP, PHASE = range(9)


def reasons_names(mask):
    return [n for b, n in REASON_BITS.items() if mask & b]


def _jsonable(v):
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, ctypes.Structure):
        return {f[0]: _jsonable(getattr(v, f[0])) for f in v._fields_}
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


class Gpu:
    """Read-only view of one NVML device."""

    def __init__(self, index=0):
        if nv is None:
            raise RuntimeError("pynvml (nvidia-ml-py) is not installed")
        nv.nvmlInit()
        self.index = index
        self.h = nv.nvmlDeviceGetHandleByIndex(index)
        self._reasons = (getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
                         or getattr(nv, "nvmlDeviceGetCurrentClocksThrottleReasons"))

    # -- generic guarded query ------------------------------------------------
    def query(self, fname, *args, device=True):
        """Call a read-only NVML getter by name; errors come back as strings."""
        if not fname.startswith(("nvmlDeviceGet", "nvmlSystemGet")):
            raise ValueError(f"{fname}: only nvmlDeviceGet*/nvmlSystemGet* are allowed")
        fn = getattr(nv, fname, None)
        if fn is None:
            return "unavailable in this pynvml"
        try:
            return _jsonable(fn(self.h, *args) if device else fn(*args))
        except Exception as e:  # NVMLError_NotSupported and friends
            return f"error: {e}"

    # -- fast readings used by the sampler ------------------------------------
    def energy_mj(self):
        return nv.nvmlDeviceGetTotalEnergyConsumption(self.h)

    def power_instant_mw(self):
        fv = nv.nvmlDeviceGetFieldValues(self.h, [FI_DEV_POWER_INSTANT])[0]
        return fv.value.uiVal if fv.nvmlReturn == 0 else -1

    def sample(self, phase=""):
        t = time.perf_counter()
        e = self.energy_mj()
        try:
            pi = self.power_instant_mw()
        except Exception:
            pi = -1
        pa = nv.nvmlDeviceGetPowerUsage(self.h)
        sm = nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM)
        mem = nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_MEM)
        rs = self._reasons(self.h)
        try:
            temp = nv.nvmlDeviceGetTemperature(self.h, nv.NVML_TEMPERATURE_GPU)
        except Exception:
            temp = -1
        return (t, e, pa, pi, sm, mem, rs, temp, phase)

    # -- provenance snapshot --------------------------------------------------
    def device_info(self):
        q = self.query
        info = {
            "name": q("nvmlDeviceGetName"),
            "driver": q("nvmlSystemGetDriverVersion", device=False),
            "nvml_version": q("nvmlSystemGetNVMLVersion", device=False),
            "cuda_driver_version": q("nvmlSystemGetCudaDriverVersion", device=False),
            "architecture": q("nvmlDeviceGetArchitecture"),
            "vbios": q("nvmlDeviceGetVbiosVersion"),
            # Which board: two H200s drew 600 and 662 W on the same copy
            # (docs/calibration.md), so a measurement names its board.
            "uuid": q("nvmlDeviceGetUUID"),
            "serial": q("nvmlDeviceGetSerial"),
            "pci_info": q("nvmlDeviceGetPciInfo"),
            "board_part_number": q("nvmlDeviceGetBoardPartNumber"),
            "memory_info": q("nvmlDeviceGetMemoryInfo"),
            "num_gpu_cores": q("nvmlDeviceGetNumGpuCores"),
            "persistence_mode": q("nvmlDeviceGetPersistenceMode"),
            "compute_mode": q("nvmlDeviceGetComputeMode"),
            "mig_mode": q("nvmlDeviceGetMigMode"),
            "performance_state": q("nvmlDeviceGetPerformanceState"),
            "power_limit_mW": q("nvmlDeviceGetPowerManagementLimit"),
            "power_limit_default_mW": q("nvmlDeviceGetPowerManagementDefaultLimit"),
            "power_limit_enforced_mW": q("nvmlDeviceGetEnforcedPowerLimit"),
            "power_limit_constraints_mW": q("nvmlDeviceGetPowerManagementLimitConstraints"),
            "power_usage_mW": q("nvmlDeviceGetPowerUsage"),
            "total_energy_mJ": q("nvmlDeviceGetTotalEnergyConsumption"),
            "mem_clocks": q("nvmlDeviceGetSupportedMemoryClocks"),
            "max_clock_sm": q("nvmlDeviceGetMaxClockInfo", nv.NVML_CLOCK_SM),
            "max_clock_graphics": q("nvmlDeviceGetMaxClockInfo", nv.NVML_CLOCK_GRAPHICS),
            "max_clock_mem": q("nvmlDeviceGetMaxClockInfo", nv.NVML_CLOCK_MEM),
            "clock_sm": q("nvmlDeviceGetClockInfo", nv.NVML_CLOCK_SM),
            "clock_mem": q("nvmlDeviceGetClockInfo", nv.NVML_CLOCK_MEM),
            "app_clock_sm": q("nvmlDeviceGetApplicationsClock", nv.NVML_CLOCK_SM),
            "app_clock_mem": q("nvmlDeviceGetApplicationsClock", nv.NVML_CLOCK_MEM),
            "default_app_clock_sm": q("nvmlDeviceGetDefaultApplicationsClock", nv.NVML_CLOCK_SM),
            "default_app_clock_mem": q("nvmlDeviceGetDefaultApplicationsClock", nv.NVML_CLOCK_MEM),
            "auto_boosted_clocks": q("nvmlDeviceGetAutoBoostedClocksEnabled"),
            "supported_clock_event_reasons": q("nvmlDeviceGetSupportedClocksEventReasons"),
            "current_clock_event_reasons": q("nvmlDeviceGetCurrentClocksEventReasons"),
            "temperature_c": q("nvmlDeviceGetTemperature", nv.NVML_TEMPERATURE_GPU),
        }
        clock_ids = {"current": 0, "app_target": 1, "app_default": 2, "customer_boost_max": 3}
        info["clock_sm_by_id"] = {k: q("nvmlDeviceGetClock", nv.NVML_CLOCK_SM, v)
                                  for k, v in clock_ids.items()}
        thresholds = {"shutdown": 0, "slowdown": 1, "mem_max": 2, "gpu_max": 3}
        info["temperature_thresholds_c"] = {k: q("nvmlDeviceGetTemperatureThreshold", v)
                                            for k, v in thresholds.items()}
        gclocks = {}
        if isinstance(info["mem_clocks"], list):
            for mc in info["mem_clocks"]:
                gclocks[str(mc)] = q("nvmlDeviceGetSupportedGraphicsClocks", mc)
        info["graphics_clocks_by_mem_clock"] = gclocks
        first = next(iter(gclocks.values()), None)
        info["graphics_clocks"] = first
        try:
            info["power_instant_mW"] = self.power_instant_mw()
        except Exception as e:
            info["power_instant_mW"] = f"error: {e}"
        return info


class Sampler(threading.Thread):
    """Polls NVML every period_s in a daemon thread; set .phase to label rows."""

    def __init__(self, gpu, period_s=0.01):
        super().__init__(daemon=True)
        self.gpu = gpu
        self.period_s = period_s
        self.rows = []
        self.phase = "start"
        self.errors = 0
        self._halt = threading.Event()

    def run(self):
        nxt = time.perf_counter()
        while not self._halt.is_set():
            try:
                self.rows.append(self.gpu.sample(self.phase))
            except Exception:
                self.errors += 1
            nxt += self.period_s
            delay = nxt - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            else:
                nxt = time.perf_counter()

    def stop(self):
        self._halt.set()
        self.join(timeout=2.0)

    def snapshot(self):
        return list(self.rows)


# -- window helpers (pure functions on sample rows) ---------------------------

def energy_ticks(rows):
    """[(t_tick, energy_mJ, half_uncertainty_s)] where the counter changed.

    t_tick is the midpoint between the last read of the old value and the
    first read of the new one."""
    out = []
    for a, b in zip(rows, rows[1:]):
        if b[E] != a[E]:
            out.append((0.5 * (a[T] + b[T]), b[E], 0.5 * (b[T] - a[T])))
    return out


def tick_window(ticks, lo, hi):
    """First and last tick inside [lo, hi], or None if fewer than two."""
    inside = [k for k in ticks if lo <= k[0] <= hi]
    if len(inside) < 2:
        return None
    return inside[0], inside[-1]


def interp_energy(ticks, t):
    """Energy counter (mJ) at time t, linear between the surrounding ticks."""
    if len(ticks) < 2 or t < ticks[0][0] or t > ticks[-1][0]:
        return None
    lo, hi = 0, len(ticks) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ticks[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (t0, e0, _), (t1, e1, _) = ticks[lo], ticks[hi]
    if t1 == t0:
        return float(e0)
    return e0 + (e1 - e0) * (t - t0) / (t1 - t0)


def step_index_at(bounds, t):
    """Fractional number of steps completed at host time t (bounds: the
    n+1 step boundaries)."""
    if t <= bounds[0]:
        return 0.0
    for i in range(len(bounds) - 1):
        if t <= bounds[i + 1]:
            return i + (t - bounds[i]) / (bounds[i + 1] - bounds[i])
    return float(len(bounds) - 1)


def energy_of(rows, bounds, i0, i1):
    """Energy of steps i0..i1 (the counter interpolated at their boundaries)."""
    ticks = energy_ticks(rows)
    ta, tb = bounds[i0], bounds[i1]
    ea, eb = interp_energy(ticks, ta), interp_energy(ticks, tb)
    if ea is None or eb is None:
        raise RuntimeError("energy counter has no ticks around the window")
    return {"t0": ta, "t1": tb, "dt_s": tb - ta, "steps": i1 - i0,
            "energy_mJ": int(round(eb - ea))}


def tick_crosscheck(rows, bounds, i0, i1):
    """Tick to tick inside the window, no interpolation: the energy between
    the first and last counter tick over the fractional steps between them."""
    ticks = energy_ticks(rows)
    w = tick_window(ticks, bounds[i0], bounds[i1])
    if w is None:
        return None
    (ta, ea, ua), (tb, eb, ub) = w
    steps = step_index_at(bounds, tb) - step_index_at(bounds, ta)
    return {"t0": ta, "t1": tb, "dt_s": tb - ta, "steps_fractional": steps,
            "energy_mJ": eb - ea, "edge_uncert_s": ua + ub,
            "energy_per_step_j": (eb - ea) / 1e3 / steps if steps > 0 else None}


def window_fields(rows, bounds, i0, i1):
    """A measurement file's fields for the window of steps i0..i1: the window
    and its two halves, the tick cross-check, time, energy and power per step,
    the time-weighted SM clock, instant power and temperature, and the
    clock-event reasons."""
    win = energy_of(rows, bounds, i0, i1)
    half = i0 + (i1 - i0) // 2
    ta, tb = win["t0"], win["t1"]
    sm, pin, temp = (weighted_stats(rows, col, ta, tb) for col in (SM, PINST, TEMP))
    reasons = reasons_or(rows, ta, tb)
    return {
        "steps": [win],
        "sub_windows": [energy_of(rows, bounds, i0, half), energy_of(rows, bounds, half, i1)],
        "tick_crosscheck": tick_crosscheck(rows, bounds, i0, i1),
        "time_per_step_s": win["dt_s"] / win["steps"],
        "energy_per_step_j": win["energy_mJ"] / 1e3 / win["steps"],
        "mean_power_w": win["energy_mJ"] / 1e3 / win["dt_s"],
        "mean_sm_mhz": sm["mean"] if sm else None,
        "sm_mhz_p10_p50_p90": sm["q"] if sm else None,
        "power_instant_w_p10_p50_p90": [x / 1e3 for x in pin["q"]] if pin else None,
        "temp_c_mean": temp["mean"] if temp else None,
        "clock_event_reasons_mask": reasons,
        "clock_event_reasons": reasons_names(reasons),
    }

def _segments(rows, col, ta, tb):
    """(value, weight) pairs: each sample's value holds until the next sample."""
    segs = []
    for a, b in zip(rows, rows[1:]):
        lo, hi = max(a[T], ta), min(b[T], tb)
        if hi > lo and a[col] is not None and a[col] >= 0:
            segs.append((a[col], hi - lo))
    return segs


def weighted_stats(rows, col, ta, tb, quantiles=(0.1, 0.5, 0.9)):
    """Time-weighted mean and quantiles of a column over [ta, tb]."""
    segs = _segments(rows, col, ta, tb)
    tot = sum(w for _, w in segs)
    if tot <= 0:
        return None
    mean = sum(v * w for v, w in segs) / tot
    segs.sort()
    qs = []
    for q in quantiles:
        acc, target, val = 0.0, q * tot, segs[-1][0]
        for v, w in segs:
            acc += w
            if acc >= target:
                val = v
                break
        qs.append(val)
    return {"mean": mean, "q": qs, "min": segs[0][0], "max": segs[-1][0]}


def reasons_or(rows, ta, tb):
    m = 0
    for r in rows:
        if ta <= r[T] <= tb:
            m |= int(r[REASONS])
    return m


CSV_HEADER = ("t,power_mW,power_instant_mW,sm_MHz,mem_MHz,energy_mJ,"
              "clock_event_reasons,temp_C,phase")


def write_samples_csv(rows, fh):
    """Write rows in the column order of the shipped *.nvml_samples.csv files
    (t = time.perf_counter() seconds), plus temperature and phase label."""
    fh.write(CSV_HEADER + "\n")
    for r in rows:
        fh.write(f"{r[T]:.6f},{r[PAVG]},{r[PINST]},{r[SM]},{r[MEM]},{r[E]},"
                 f"{r[REASONS]},{r[TEMP]},{r[PHASE]}\n")
