#!/usr/bin/env python3
"""Cuts a small Kineto excerpt for tests: the events that start inside a time
window (plus the metadata and the step / annotation ranges that overlap it),
without Python-stack events and flow arrows, gzipped.

  scripts/kineto_excerpt.py IN.json.gz OUT.json.gz --start-ms A --length-ms B
      [--merge OTHER.json.gz]   add OTHER's events (same window offsets): a
                                multi-GPU file from two ranks' traces
Times are relative to the first event of IN (OTHER: of OTHER).
"""
import argparse
import gzip
import json

DROP_CATS = {"python_function", "ac2g", "async", "async_cpu_to_gpu", "fwdbwd", "overhead"}


def window(events, start_ms, length_ms):
    ts = [e["ts"] for e in events if e.get("ph") == "X" and "ts" in e]
    t0 = min(ts) + start_ms * 1000.0
    t1 = t0 + length_ms * 1000.0
    out = []
    for e in events:
        if e.get("ph") == "M":
            out.append(e)
            continue
        if e.get("ph") != "X" or (e.get("cat") or "") in DROP_CATS:
            continue
        b, d = e.get("ts", 0), e.get("dur", 0)
        if t0 <= b <= t1:
            out.append(e)
        elif b < t0 and b + d > t0 and ("ProfilerStep" in e.get("name", "") or
                                       (e.get("cat") or "").lower() == "user_annotation"):
            out.append(e)  # a step or annotation range open at the window's start
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("inp")
    p.add_argument("out")
    p.add_argument("--start-ms", type=float, default=0.0)
    p.add_argument("--length-ms", type=float, required=True)
    p.add_argument("--merge")
    a = p.parse_args()
    doc = json.load(gzip.open(a.inp))
    events = window(doc["traceEvents"], a.start_ms, a.length_ms)
    if a.merge:
        events += window(json.load(gzip.open(a.merge))["traceEvents"], a.start_ms, a.length_ms)
    doc["traceEvents"] = events
    with gzip.open(a.out, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
