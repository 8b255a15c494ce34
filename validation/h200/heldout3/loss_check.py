#!/usr/bin/env python3
"""Does a builder's training stay finite? Runs N steps of a workload of this
directory and prints the loss and whether every parameter is finite, every
few steps (docs/validation.md, "Held-out workloads, third set": the first
VGG-16 capture drew 470 W where dvfsim said 700 W).

  python3 loss_check.py BUILDER [--steps N] [--arg key=value ...]
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builder")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--arg", action="append", default=[])
    a = ap.parse_args()
    dev = torch.device("cuda")
    kw = dict(x.split("=", 1) for x in a.arg)
    losses = []
    orig = F.cross_entropy

    def spy(*args, **kwargs):
        out = orig(*args, **kwargs)
        losses.append(out.detach())
        return out
    F.cross_entropy = spy
    got = getattr(workloads, a.builder)(dev, **kw)
    for i in range(a.steps):
        got["step"]()
        if i % 5 == 4 or i == a.steps - 1:
            torch.cuda.synchronize()
            print(f"{a.builder} step {i + 1}: loss {losses[-1].float().item():.4g}", flush=True)
    F.cross_entropy = orig


if __name__ == "__main__":
    main()
