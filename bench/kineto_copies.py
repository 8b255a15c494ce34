#!/usr/bin/env python3
"""N copies of a Kineto trace's events back to back, as one Kineto JSON file.

    python3 bench/kineto_copies.py TRACE.json[.gz] N OUT.json

Copy c has every time stamp shifted by c x (the trace's span + 1 ms) and its
correlation, External id, flow and record ids offset, so the copies read as
N x the iterations of the original. For measuring the Kineto reader's time
and peak memory per size (README, "Benchmarks"): e.g.
    /usr/bin/time -f '%U+%S s %M KB' build/apps/dvfsim trace info OUT.json
"""
import gzip
import json
import sys


def main():
    src, n, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with (gzip.open(src) if src.endswith(".gz") else open(src, "rb")) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    timed = [e for e in events if isinstance(e.get("ts"), (int, float)) and e.get("ph") != "M"]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed) + 1000.0

    def int_arg(e, key):
        v = (e.get("args") or {}).get(key)
        return v if isinstance(v, int) else 0

    ids = [int_arg(e, "correlation") for e in events] + [int_arg(e, "External id") for e in events]
    ids += [e["id"] for e in events if isinstance(e.get("id"), int)]
    offset = max(ids) + 1
    keys = ("correlation", "External id", "wait_on_cuda_event_record_corr_id",
            "Sequence number", "Record function id")
    with open(dst, "w") as f:
        head = {k: v for k, v in trace.items() if k != "traceEvents"}
        f.write(json.dumps(head)[:-1] + ', "traceEvents": [\n')
        first = True
        for c in range(n):
            for e in events:
                if c and e.get("ph") == "M":
                    continue  # process and thread names once
                e = dict(e)
                if c:
                    if isinstance(e.get("ts"), (int, float)):
                        e["ts"] = round(e["ts"] + c * span, 3)
                    if isinstance(e.get("id"), int):
                        e["id"] += c * offset
                    if isinstance(e.get("args"), dict):
                        a = dict(e["args"])
                        for k in keys:
                            if isinstance(a.get(k), int) and a[k] >= 0:
                                a[k] += c * offset
                        e["args"] = a
                    name = e.get("name")
                    if isinstance(name, str) and name.startswith("ProfilerStep#"):
                        e["name"] = "ProfilerStep#%d" % (1000 * c + int(name[13:] or 0))
                f.write(("" if first else ",\n") + json.dumps(e))
                first = False
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
