"""pipeline_compare.py on hand-made per-rank traces (no GPU, no torch)."""
import gzip
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import pipeline_compare as pc  # noqa: E402

SCRIPT = os.path.join(os.path.dirname(HERE), "pipeline_compare.py")


def write_trace(path, steps):
    """steps: [(host_ts, host_dur, [(name, gpu_ts, gpu_dur), ...])], µs."""
    ev, corr = [], 0
    for j, (ts, dur, kernels) in enumerate(steps):
        ev.append({"cat": "user_annotation", "name": f"ProfilerStep#{j}", "ts": ts, "dur": dur})
        for i, (name, kts, kdur) in enumerate(kernels):
            corr += 1
            ev.append({"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts + 1 + i,
                       "dur": 1, "args": {"correlation": corr}})
            ev.append({"cat": "kernel", "name": name, "ts": kts, "dur": kdur,
                       "args": {"correlation": corr}})
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": ev}, f)


def two_rank_job(tmp_path, time_s=0.0012, energy=(1.5, 2.5)):
    # Rank 0, iteration 0: kernels [100, 300) and [250, 350) overlap (250 µs
    # of busy time once merged), then 50 µs in NCCL; iteration 1: 300 µs.
    write_trace(tmp_path / "t.rank0.kineto.json.gz",
                [(0, 1000, [("gemm", 100, 200), ("add", 250, 100), ("ncclDevKernel_SendRecv", 400, 50)]),
                 (1000, 1000, [("gemm", 1100, 300)])])
    write_trace(tmp_path / "t.rank1.kineto.json.gz",
                [(0, 1000, [("gemm", 500, 400)]), (1000, 1000, [("gemm", 1500, 200)])])
    for r in range(2):
        (tmp_path / f"t.rank{r}.measured.json").write_text(json.dumps(
            {"rank": r, "time_per_step_s": time_s, "energy_per_step_j": energy[r]}))
    (tmp_path / "t.job.json").write_text(json.dumps(
        {"stages": 2, "microbatches": 2, "shared_gpu": False, "time_per_iteration_s": time_s,
         "energy_per_iteration_j": sum(energy)}))


def test_busy_merges_overlaps_and_leaves_out_nccl(tmp_path):
    two_rank_job(tmp_path)
    its = pc.rank_iterations(str(tmp_path / "t.rank0.kineto.json.gz"))
    assert [round(i["busy_s"] * 1e6, 6) for i in its] == [250.0, 300.0]
    assert [round(i["comm_s"] * 1e6, 6) for i in its] == [50.0, 0.0]
    # Iteration 0 spans to iteration 1's first kernel (1100 - 100 µs); the
    # last one to its own last kernel's end.
    assert [round(i["span_s"] * 1e6, 6) for i in its] == [1000.0, 300.0]
    assert [i["nccl_kernels"] for i in its] == [1, 0]


def test_bubble_is_measured_time_less_traced_busy(tmp_path):
    two_rank_job(tmp_path)
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, SCRIPT, str(tmp_path), "t", "--json", str(out)], check=True,
                   capture_output=True)
    res = json.loads(out.read_text())
    # 1.2 ms measured; rank 0 busy (250 + 300) / 2 = 275 µs, rank 1 300 µs.
    assert res["ranks"][0]["bubble_trace_s"] == pytest.approx(925e-6)
    assert res["ranks"][1]["bubble_trace_s"] == pytest.approx(900e-6)
    assert res["job"]["energy_measured_j"] == pytest.approx(4.0)


def test_missing_field_is_named(tmp_path):
    two_rank_job(tmp_path)
    (tmp_path / "t.rank1.measured.json").write_text(json.dumps({"rank": 1}))
    r = subprocess.run([sys.executable, SCRIPT, str(tmp_path), "t"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "t.rank1.measured.json: field 'time_per_step_s' missing" in r.stderr


@pytest.mark.skipif(not os.environ.get("DVFSIM_EXE") or not os.environ.get("DVFSIM_SHIPPED_TRACE"),
                    reason="needs the dvfsim program and the shipped trace (ctest sets them)")
def test_against_dvfsim_pipeline_of_the_shipped_trace(tmp_path):
    two_rank_job(tmp_path)
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, SCRIPT, str(tmp_path), "t", "--json", str(out),
                    "--single-trace", os.environ["DVFSIM_SHIPPED_TRACE"],
                    "--dvfsim", os.environ["DVFSIM_EXE"]], check=True, capture_output=True)
    res = json.loads(out.read_text())
    summary = json.load(open(os.path.join(res["dvfsim_command"].split("--out ")[1], "summary.json")))
    assert "--parallel pp=2,microbatches=2,schedule=1f1b" in res["dvfsim_command"]
    for r, row in enumerate(res["ranks"]):
        g = summary["per_gpu"][r]
        assert row["energy_predicted_j"] == g["energy_j"]
        assert row["bubble_predicted_s"] == pytest.approx(summary["time_per_iteration_s"] - g["busy_s"])
    # Two stages of a 24-block model: the job's energy is its two GPUs'.
    assert res["job"]["energy_predicted_j"] == pytest.approx(
        sum(g["energy_j"] for g in summary["per_gpu"]), rel=1e-9)
