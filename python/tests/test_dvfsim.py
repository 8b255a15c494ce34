"""The dvfsim Python module against the dvfsim program: same inputs, same
numbers (bit for bit), plus the module's own behaviour. Run by ctest
(python.pytest) with PYTHONPATH=build/python, DVFSIM_EXE and the repository
as the working directory."""
import json
import os
import pathlib
import re
import subprocess
import sys
import threading

import pandas as pd
import pytest

import dvfsim

REPO = pathlib.Path(os.environ.get("DVFSIM_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
EXE = os.environ.get("DVFSIM_EXE", str(REPO / "build" / "apps" / "dvfsim"))
TRACE = "traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz"  # relative: as the CLI is given it


@pytest.fixture(scope="module", autouse=True)
def in_repo():
    old = os.getcwd()
    os.chdir(REPO)
    yield
    os.chdir(old)


@pytest.fixture(scope="module")
def workload():
    return dvfsim.load_trace(TRACE)


def cli_run(out, device, policy, *sets):
    args = [EXE, "run", "--trace", TRACE, "--device", device, "--policy", policy, "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True, capture_output=True, cwd=REPO)
    return out


@pytest.mark.parametrize("policy,params", [("native", {}),
                                           ("kernel-oracle", {"switch_latency_us": 0})])
def test_run_gives_the_cli_numbers_bit_for_bit(tmp_path, workload, policy, params):
    cli = cli_run(tmp_path / "cli", "rtx3080ti", policy, *(f"{k}={v}" for k, v in params.items()))
    r = dvfsim.run(workload, device="rtx3080ti", policy=policy, **params)
    expected = json.loads((cli / "summary.json").read_text())
    assert r.summary == expected  # every field, floats compared exactly
    if policy == "kernel-oracle":
        # the headline: 16.00 % on the 3080 Ti with free switches (README)
        assert round(r.summary["energy_saving_pct"], 2) == 16.00
        assert r.summary["oracle"] is True
    # The tables are the CSV files, read back.
    for name, table in [("timeline.csv", r.timeline), ("clock_switches.csv", r.switches)]:
        cli_table = pd.read_csv(cli / name, keep_default_na=False, na_values=[""],
                                float_precision="round_trip")
        pd.testing.assert_frame_equal(table, cli_table, check_exact=True)
    # kernels.csv names kernels by id; both sides join names.csv back.
    pd.testing.assert_frame_equal(r.kernels, dvfsim.read_kernels(cli), check_exact=True)
    names = pd.read_csv(cli / "names.csv", keep_default_na=False, na_values=[""], dtype={"name": str})
    pd.testing.assert_frame_equal(r.names, names, check_exact=True)
    # the trace's first kernel (correlation 21) is a gather launched by aten::gather
    first = r.kernels.iloc[0]
    assert first["name"] == ("void at::native::vectorized_gather_kernel<16, long>(char*, char*, "
                             "long*, int, long, long, long, long, bool)")
    assert first["operator"] == "aten::gather"
    assert list(r.kernels.columns[:6]) == ["kernel_index", "iteration", "name", "operator",
                                           "name_id", "operator_id"]
    # each name once: fewer rows than kernels, every id resolves
    assert len(r.names) < len(r.kernels) / 10
    assert set(r.kernels["name_id"]) | set(r.kernels["operator_id"]) <= set(r.names["name_id"])
    # write() writes the same files, byte for byte.
    mine = r.write(tmp_path / "module")
    for name in ["summary.json", "kernels.csv", "names.csv", "timeline.csv", "clock_switches.csv",
                 "trace.json", "clock_plan.json", "manifest.json"]:
        assert (mine / name).read_bytes() == (cli / name).read_bytes(), name


def test_switch_counts_agree(workload):
    r = dvfsim.run(workload, device="rtx3080ti", policy="pass-level", switch_latency_us=100)
    s = r.switches
    assert r.summary["clock_switches"] == int(s["domain"].isin(["core", "memory"]).sum()) > 0
    # the timeline joins kernels.csv by kernel_index
    t = r.timeline
    joined = t[t["state"] == "kernel"].merge(r.kernels, on="kernel_index", suffixes=("", "_k"))
    assert len(joined) == (t["state"] == "kernel").sum()


def test_workload_kernels_join_back_to_the_trace(workload):
    k = workload.kernels
    assert len(k) == len(workload) == 3718  # 2 x (1,438 kernels + 421 memsets)
    assert workload.iterations == 2
    first = k.iloc[0]
    # the trace's first kernel: "ts": 5112196511067.996, "correlation": 21 (aten::gather)
    assert first["correlation_id"] == 21
    assert first["operator"] == "aten::gather"
    assert first["traced_start_ns"] == 5112196511067996
    assert set(k["phase"]) >= {"forward", "backward", "optimizer"}
    assert "Workload" in repr(workload)
    # Nsight Compute's sidecar counts every SM kernel of the shipped step
    sm = k[~k["class"].isin(["memset", "memcpy"])]
    assert (sm["instructions_source"] == "ncu").all() and (sm["instructions"] > 0).all()


def test_workload_kernels_carry_the_l2_excess_of_a_layout_change():
    # tests/fuzz/corpus/kineto/mini_layouts.json: a bf16 2x16x4x4 copy NCHW ->
    # channels-last (C read with stride 16: 30 bytes beyond each of 512
    # elements, 0.74 of them in L2) and a cat of an NCHW and a channels-last
    # 2x8x4x4 half (the latter read with stride 8 along W: 14 bytes beyond
    # each of 256 elements)
    k = dvfsim.load_trace(str(REPO / "tests/fuzz/corpus/kineto/mini_layouts.json")).kernels
    assert k["l2_excess_bytes"].tolist() == pytest.approx([0.74 * 30 * 512, 0.74 * 14 * 256])


def test_validate_is_the_clis_json():
    # The shipped step against its measurement (154.53 ms, 107.36 J per
    # step), under a locked 1410 MHz core clock as the CLI would be told.
    measured = "traces/data/gpt3xl_h200_train_b4_t2048.measured.json"
    v = dvfsim.validate(TRACE, measured, policy="static", core_mhz=1410)
    cli = subprocess.run([EXE, "hw", "validate", "--trace", TRACE, "--measured", measured, "--device", "h200",
                          "--policy", "static", "--set", "core_mhz=1410", "--json"],
                         capture_output=True, text=True, cwd=REPO)
    assert v == json.loads(cli.stdout)
    assert v["measured"]["energy_per_iteration_j"] == pytest.approx(107.36, abs=0.01)
    assert v["policy"] == "static" and v["settings"] == {"core_mhz": "1410"}
    with pytest.raises(ValueError, match="unknown policy 'statik'"):
        dvfsim.validate(TRACE, measured, policy="statik")


def test_devices_and_policies():
    d = dvfsim.devices()
    row = d.set_index("name").loc["rtx3080ti"]
    assert row["display_name"] == "NVIDIA GeForce RTX 3080 Ti"
    p = dvfsim.policies().set_index("name")
    assert bool(p.loc["kernel-oracle", "oracle"]) is True
    assert bool(p.loc["native", "oracle"]) is False
    assert "max_slowdown" in [q["name"] for q in p.loc["kernel-oracle", "params"]]


def test_bad_names_are_value_errors_naming_them(workload):
    with pytest.raises(ValueError, match="nosuchgpu"):
        dvfsim.run(workload, device="nosuchgpu", policy="native")
    with pytest.raises(ValueError, match="nosuchpolicy"):
        dvfsim.run(workload, device="h200", policy="nosuchpolicy")
    with pytest.raises(ValueError, match="frobnicate"):
        dvfsim.run(workload, device="h200", policy="native", frobnicate=1)
    with pytest.raises(ValueError, match="no/such/trace.json"):
        dvfsim.load_trace("no/such/trace.json")


def test_simulation_releases_the_gil(workload):
    started = threading.Event()
    done = []

    # A planning policy: long enough (about a second) for the main thread to
    # be scheduled while it runs; a native replay can end within one thread
    # switch now that it takes milliseconds.
    def work():
        started.set()
        done.append(
            dvfsim.run(workload, device="rtx3080ti", policy="kernel-oracle", switch_latency_us=0)
        )

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    count = 0
    while t.is_alive():  # with the GIL held by the run, this loop could not turn
        count += 1
    t.join()
    assert done and done[0].summary["policy"] == "kernel-oracle"
    assert count > 1000, count


def test_sweep_of_a_dict_gives_the_run_numbers(tmp_path, workload):
    experiment = {"name": "py", "traces": [TRACE], "devices": ["h200"],
                  "policies": ["native", "max"], "baseline": "none"}
    df = dvfsim.sweep(experiment, jobs=2, out=tmp_path / "sweep")
    assert list(df["status"]) == ["ok", "ok"]
    for _, row in df.iterrows():
        s = dvfsim.run(workload, device="h200", policy=row["policy"], baseline=None).summary
        assert row["energy_j"] == s["energy_j"]
        assert row["time_s"] == s["time_s"]
    # the same from a YAML file, into a temporary directory
    path = tmp_path / "e.yaml"
    path.write_text(json.dumps(experiment))  # JSON is YAML
    again = dvfsim.sweep(path)
    assert list(again["energy_j"]) == list(df["energy_j"])


def test_readme_example_runs_as_written():
    text = (REPO / "README.md").read_text()
    m = re.search(r"<!-- python example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "README.md: no python example block"
    code = m.group(1)
    assert len(code.strip().splitlines()) <= 6
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert "16.00" in out.stdout, out.stdout
