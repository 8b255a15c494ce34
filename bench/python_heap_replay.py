#!/usr/bin/env python3
"""Reference point for the replay benchmark: a plain Python heap-based event
loop doing the same work per kernel as dvfsim's engine (ready time, start when
the GPU is free, duration at the current clock from a compute/memory split,
power from a linear model, exact energy integration, a governor tick every
100 ms). It reads the kernels of a `dvfsim run` output (kernels.csv) and prints
kernels per second of CPU time. Usage:

  dvfsim run --trace traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz \
      --device h200 --policy native --out /tmp/ref
  python3 bench/python_heap_replay.py /tmp/ref/kernels.csv
"""
import csv
import heapq
import sys
import time


def replay(kernels, core_mhz=1710.0, mem_mhz=3201.0):
    events = []  # (time_ns, seq, kind, index)
    seq = 0
    for i, k in enumerate(kernels):
        heapq.heappush(events, (k["ready"], seq, 0, i))
        seq += 1
    heapq.heappush(events, (100_000_000, seq, 2, -1))
    seq += 1
    gpu_free = 0
    now = 0
    energy = 0.0
    queue = []
    busy = False
    power = 120.0
    while events:
        t, _, kind, i = heapq.heappop(events)
        energy += power * (t - now) * 1e-9
        now = t
        if kind == 0:
            queue.append(i)
        elif kind == 1:
            busy = False
            power = 120.0
        elif kind == 2:
            if any(e[2] != 2 for e in events) or queue:
                heapq.heappush(events, (t + 100_000_000, seq, 2, -1))
                seq += 1
        if not busy and queue:
            j = queue.pop(0)
            k = kernels[j]
            tc = k["tc"] / core_mhz
            tm = k["tm"] / mem_mhz
            d = max(tc, tm) + 0.1 * min(tc, tm) + 1000.0
            power = 120.0 + 300.0 * (tc / d) + 200.0 * (tm / d)
            busy = True
            heapq.heappush(events, (now + int(d), seq, 1, j))
            seq += 1
            gpu_free = now + int(d)
    return energy, gpu_free


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    kernels = []
    for r in rows:
        d = float(r["duration_ns"])
        kernels.append({"ready": int(r["start_ns"]), "tc": 0.6 * d * 1710.0, "tm": 0.4 * d * 3201.0})
    # CPU time, as Google Benchmark's rates: on a loaded machine the wall
    # time holds other processes' time too.
    n = 0
    t0 = time.process_time()
    while time.process_time() - t0 < 2.0:
        replay(kernels)
        n += len(kernels)
    rate = n / (time.process_time() - t0)
    print(f"python heap replay: {rate:,.0f} kernels/s ({len(kernels)} kernels per replay)")


if __name__ == "__main__":
    main()
