"""dvfsim from Python: replay GPU kernel traces against calibrated power and
latency models under DVFS policies, with the command-line program's own code
(the numbers are the CLI's, bit for bit). docs/python.md.

    import dvfsim
    w = dvfsim.load_trace("traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz")
    r = dvfsim.run(w, device="rtx3080ti", policy="kernel-oracle", switch_latency_us=0)
    print(r.summary["energy_saving_pct"])
    r.kernels.groupby("class")["energy_j"].sum()

Simulations release the GIL, so threads run them in parallel.
"""
import io
import json
import os
import pathlib
import tempfile

import pandas as pd

from . import _dvfsim

__version__ = _dvfsim.version
InputError = _dvfsim.InputError  # a ValueError: bad trace, device, policy or parameter

__all__ = ["load_trace", "devices", "policies", "run", "sweep", "validate", "read_kernels", "join_names",
           "Workload", "Result", "InputError", "__version__"]


def _setting_text(value):
    """A --set value as the CLI would have it typed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Workload:
    """A loaded trace: `.kernels` (a DataFrame, one row per activity in launch
    order), `.iterations`, `.path`. Made by load_trace()."""

    def __init__(self, native):
        self._native = native
        self._kernels = None

    path = property(lambda self: self._native.path)
    iterations = property(lambda self: self._native.iterations)
    capture_gpu = property(lambda self: self._native.capture_gpu)
    iteration_rule = property(lambda self: self._native.iteration_rule)
    notes = property(lambda self: list(self._native.notes))

    @property
    def kernels(self):
        if self._kernels is None:
            df = pd.DataFrame(self._native.columns())
            df["correlation_id"] = df["correlation_id"].astype("Int64")
            self._kernels = df
        return self._kernels.copy()

    def __len__(self):
        return self._native.num_kernels

    def __repr__(self):
        return (f"<dvfsim.Workload {self.path}: {len(self)} activities, "
                f"{self.iterations} iterations>")


_NAMES_DTYPE = {"name": str}  # a name that looks like a number stays text


def join_names(kernels, names):
    """kernels.csv's rows with `name` and `operator` looked up in names.csv
    (name_id, name), placed after `iteration`; the id columns stay."""
    table = names.set_index("name_id")["name"].fillna("")
    out = kernels.copy()
    at = out.columns.get_loc("iteration") + 1
    out.insert(at, "name", out["name_id"].map(table).fillna("").astype(str))
    out.insert(at + 1, "operator", out["operator_id"].map(table).fillna("").astype(str))
    return out


def read_kernels(run_dir):
    """A run directory's kernels.csv with names.csv joined back (join_names)."""
    run_dir = pathlib.Path(run_dir)
    kernels = pd.read_csv(run_dir / "kernels.csv", keep_default_na=False, na_values=[""],
                          float_precision="round_trip")
    names = pd.read_csv(run_dir / "names.csv", keep_default_na=False, na_values=[""],
                        dtype=_NAMES_DTYPE)
    return join_names(kernels, names)


class Result:
    """One run: `.summary` (dict, the fields of summary.json), `.kernels`,
    `.names`, `.timeline`, `.switches` (DataFrames: kernels.csv with the names
    joined back, names.csv, timeline.csv, clock_switches.csv), `.write(dir)`
    (every file `dvfsim run --out` writes)."""

    def __init__(self, native):
        self._native = native
        self._cache = {}

    def _table(self, key, text, dtype=None):
        if key not in self._cache:
            self._cache[key] = pd.read_csv(io.StringIO(text()), keep_default_na=False,
                                           na_values=[""], dtype=dtype,
                                           float_precision="round_trip")
        return self._cache[key].copy()

    @property
    def summary(self):
        return json.loads(self._native.summary_json())

    @property
    def kernels(self):
        """kernels.csv with the names joined back: `name` and `operator`
        (from names.csv by name_id and operator_id) after `iteration`."""
        if "kernels_named" not in self._cache:
            self._cache["kernels_named"] = join_names(self._table("kernels", self._native.kernels_csv),
                                                      self._table("names", self._native.names_csv, _NAMES_DTYPE))
        return self._cache["kernels_named"].copy()

    @property
    def names(self):
        """names.csv: name_id, name (the kernel and operator names kernels.csv refers to)."""
        return self._table("names", self._native.names_csv, _NAMES_DTYPE)

    @property
    def timeline(self):
        return self._table("timeline", self._native.timeline_csv)

    @property
    def switches(self):
        return self._table("switches", self._native.clock_switches_csv)

    def trace_json(self):
        """The Perfetto/Chrome trace (trace.json) as a string."""
        return self._native.trace_json()

    def write(self, directory):
        """Writes summary.json, kernels.csv, names.csv, timeline.csv, clock_switches.csv,
        trace.json, clock_plan.json and manifest.json, as `dvfsim run --out`."""
        self._native.write(os.fspath(directory))
        return pathlib.Path(directory)

    def __repr__(self):
        s = self.summary
        saving = s.get("energy_saving_pct")
        tail = f", saving {saving:.2f} % vs {s['baseline']['policy']}" if saving is not None else ""
        return f"<dvfsim.Result {s['policy']} on {s['device']}: {s['energy_j']:.2f} J{tail}>"


def load_trace(path, gpu=None, iterations=None, capture_device=None, host_overhead="auto"):
    """Reads a Kineto (JSON, .gz) or native trace, as `dvfsim run --trace`.
    gpu, iterations, capture_device: the CLI's --gpu, --iterations,
    --capture-device; host_overhead: "auto", "off" or a factor (the profiler
    host-overhead correction, also settable per run)."""
    return Workload(_dvfsim.load_trace(os.fspath(path), -1 if gpu is None else int(gpu),
                                       0 if iterations is None else int(iterations),
                                       capture_device or "", str(host_overhead)))


def devices():
    """The shipped device models: a DataFrame (name, display_name, clocks, limit, path)."""
    return pd.DataFrame(_dvfsim.devices())


def policies():
    """The DVFS policies: a DataFrame (name, oracle, description, params)."""
    return pd.DataFrame(_dvfsim.policies())


def run(workload, device="h200", policy="native", baseline="native", seed=1, **params):
    """Replays `workload` (from load_trace, or a trace path) on `device` under
    `policy`, and `baseline` ("none": no baseline). params: the policy's
    parameters and the engine settings, as `--set KEY=VALUE`
    (e.g. switch_latency_us=0, max_slowdown=1)."""
    if not isinstance(workload, Workload):
        workload = load_trace(workload)
    settings = {k: _setting_text(v) for k, v in params.items()}
    return Result(_dvfsim.run(workload._native, str(device), str(policy),
                              "none" if baseline is None else str(baseline), int(seed), settings))


def validate(trace, measured, device="h200", policy="native", host_overhead="auto", iterations=None,
             tolerance=5.0, **params):
    """Compares the prediction for a trace with a measurement of the same
    steps, as `dvfsim hw validate --json` (docs/validation.md): a dict with
    `measured`, `predicted` (with the host-overhead correction), `raw`,
    `paired` and `host_band` where they apply, `pass` (energy within
    `tolerance` %). trace, measured: paths (a capture.py *.measured.json, or
    `hw measure`'s measurement.json with `iterations`); policy and params:
    the conditions the measured run ran under, as `--policy` and `--set`."""
    settings = {k: _setting_text(v) for k, v in params.items()}
    return json.loads(_dvfsim.validate(os.fspath(trace), os.fspath(measured), str(device), str(policy),
                                       str(host_overhead), 0 if iterations is None else int(iterations),
                                       settings, float(tolerance)))


def sweep(experiment, jobs=0, out=None, progress=False):
    """Runs an experiment (a YAML file path, or a dict in the experiment
    format of docs/experiments.md) as `dvfsim sweep`, and returns its
    results.csv as a DataFrame. out: the sweep directory (default: a
    temporary one); jobs: parallel runs (0: every core). Runs that fail are
    rows with status != "ok" and their error."""
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix="dvfsim-sweep-")
        out = tmp.name
    out = os.fspath(out)
    try:
        if isinstance(experiment, dict):
            import yaml
            os.makedirs(out, exist_ok=True)
            path = os.path.join(out, "experiment.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(experiment, f, sort_keys=False)
        else:
            path = os.fspath(experiment)
        _dvfsim.sweep(path, out, int(jobs), bool(progress))
        return pd.read_csv(os.path.join(out, "results.csv"), keep_default_na=False,
                           na_values=[""], float_precision="round_trip")
    finally:
        if tmp is not None:
            tmp.cleanup()
