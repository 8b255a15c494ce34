"""The capture scripts' pure parts: NVML energy windows and profiled steps."""
import gzip
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import kineto_steps  # noqa: E402
import nvml_readonly as nr  # noqa: E402


def samples_at_500_w():
    """NVML rows every 10 ms over 1 s; the energy counter moves in 100 ms
    ticks of 50 J (500 W), as the H200's does."""
    rows = []
    for k in range(101):
        t = k * 0.01
        rows.append((t, 50_000 * (k // 10), 500_000, 500_000, 1980, 3201, 0, 40, "measure"))
    return rows


def test_energy_window_interpolates_between_ticks():
    rows = samples_at_500_w()
    # Ticks at the midpoints of the samples around each change: 0.095, 0.195, ...
    ticks = nr.energy_ticks(rows)
    assert ticks[0][0] == pytest.approx(0.095) and ticks[0][1] == 50_000
    bounds = [0.15, 0.35, 0.55]               # two steps of 0.2 s
    w = nr.energy_of(rows, bounds, 0, 2)
    assert w["steps"] == 2 and w["dt_s"] == pytest.approx(0.4)
    assert w["energy_mJ"] == 200_000          # 0.4 s at 500 W


def test_tick_crosscheck_counts_fractional_steps():
    rows = samples_at_500_w()
    c = nr.tick_crosscheck(rows, [0.15, 0.35, 0.55], 0, 2)
    # First and last ticks inside the window: 0.195 (0.225 steps in) and
    # 0.495 (1.725): 150 J over 1.5 steps = 100 J per step (0.2 s x 500 W).
    assert c["steps_fractional"] == pytest.approx(1.5)
    assert c["energy_mJ"] == 150_000
    assert c["energy_per_step_j"] == pytest.approx(100.0)


def test_a_window_outside_the_ticks_is_refused():
    with pytest.raises(RuntimeError, match="no ticks around the window"):
        nr.energy_of(samples_at_500_w(), [0.0, 0.5], 0, 1)


def test_trace_stats_joins_kernels_to_their_launching_step(tmp_path):
    ev = [
        {"cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
        {"cat": "user_annotation", "name": "ProfilerStep#2", "ts": 100, "dur": 100},
        {"cat": "cpu_op", "name": "aten::mm", "ts": 5, "dur": 10},
        {"cat": "cpu_op", "name": "aten::add", "ts": 20, "dur": 5},
        {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 6, "dur": 2, "args": {"correlation": 7}},
        {"cat": "cuda_runtime", "name": "cudaMemsetAsync", "ts": 21, "dur": 2, "args": {"correlation": 8}},
        {"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 150, "dur": 2, "args": {"correlation": 9}},
        # Step 1's kernel runs after its range ended: it still belongs to step 1.
        {"cat": "kernel", "name": "gemm", "ts": 90, "dur": 40, "args": {"correlation": 7}},
        {"cat": "gpu_memset", "name": "Memset", "ts": 130, "dur": 2, "args": {"correlation": 8}},
        {"cat": "kernel", "name": "add", "ts": 160, "dur": 10, "args": {"correlation": 9}},
        {"cat": "kernel", "name": "orphan", "ts": 300, "dur": 1, "args": {"correlation": 99}},
    ]
    path = tmp_path / "t.json.gz"
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": ev}, f)
    st = kineto_steps.trace_stats(str(path))
    s1, s2 = st["steps"]
    assert (s1["kernels"], s1["memset"], s1["cpu_ops"], s1["runtime_calls"]) == (1, 1, 2, 2)
    assert s1["gpu_busy_ms"] == pytest.approx(0.042) and s1["gpu_span_ms"] == pytest.approx(0.042)
    assert (s2["kernels"], s2["gpu_busy_ms"]) == (1, pytest.approx(0.010))
    assert st["kernels_total"] == 3 and st["unattributed_gpu_events"] == 1


def test_window_fields_halves_and_statistics():
    rows = samples_at_500_w()
    f = nr.window_fields(rows, [0.15, 0.35, 0.55], 0, 2)
    assert f["steps"][0]["energy_mJ"] == 200_000
    # Halves of one step each: 0.2 s at 500 W = 100 J.
    assert [s["energy_mJ"] for s in f["sub_windows"]] == [100_000, 100_000]
    assert f["tick_crosscheck"]["energy_per_step_j"] == pytest.approx(100.0)
    assert f["energy_per_step_j"] == pytest.approx(100.0)
    assert f["time_per_step_s"] == pytest.approx(0.2) and f["mean_power_w"] == pytest.approx(500.0)
    assert f["mean_sm_mhz"] == pytest.approx(1980)
    assert f["power_instant_w_p10_p50_p90"] == [500.0, 500.0, 500.0]
    assert f["temp_c_mean"] == pytest.approx(40)
    assert f["clock_event_reasons_mask"] == 0 and f["clock_event_reasons"] == []
