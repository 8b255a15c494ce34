#!/usr/bin/env python3
"""Instruction mix of the calibration microbenchmarks and of one GPT-3 step.

Meant to run under Nsight Compute with the profiler off at start, clocks left
alone and NVML untouched (see run_ncu.sh beside this file):

  ncu --clock-control none --profile-from-start off --csv --page raw \
      --metrics ... --log-file micro.csv python3 ncu_instmix.py micro
  ncu ... --log-file step.csv python3 ncu_instmix.py step --preset xl

Between cudaProfilerStart and cudaProfilerStop it launches, for `micro`, per
benchmark of microbench.py one marker kernel (`torch.cuda._sleep`, kernel
`spin_kernel`) then one operation of the benchmark; for `step`, one marker and
then one training step after warm-up. The order of the benchmarks is printed
as JSON on stdout (`ORDER [...]`), so the ncu rows can be split at the
markers and attributed.
"""
import argparse
import json
import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "traces", "capture"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def profiled(fn):
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    torch.cuda._sleep(1000)
    fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def micro(suite="calib", out=""):
    import microbench
    if suite == "traffic":
        benches = microbench.traffic_benches(torch, SimpleNamespace(out=out))
    else:
        benches = microbench.build_benches(torch, F, SimpleNamespace(suite=suite, only=""))
    order = []
    for b in benches:
        if b.kind != "loop" or b.make is None:
            continue
        fn = b.make()
        for i in range(3):
            fn(i)
        profiled(lambda: fn(3))
        order.append(b.name)
        del fn
        torch.cuda.empty_cache()
    print("ORDER " + json.dumps(order), flush=True)


def step(args):
    import capture_gpt3 as cg
    cfg = cg.PRESETS[args.preset]
    torch.manual_seed(0)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    with torch.device("cuda"):
        model = cg.GPT(cfg)
    fn, _ = cg.make_step(model, args.mode, args.batch, args.seq, cfg.vocab, gen)
    for _ in range(args.warmup):
        fn()
    profiled(fn)
    print("ORDER " + json.dumps([f"gpt3{args.preset}_{args.mode}_b{args.batch}_t{args.seq}"]),
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("micro", "step", "traffic"))
    ap.add_argument("--out", default="/tmp", help="where `traffic` builds its kernels")
    ap.add_argument("--preset", default="xl")
    ap.add_argument("--mode", default="train")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()
    if args.what == "step":
        step(args)
    else:
        micro("traffic" if args.what == "traffic" else "calib", args.out)


if __name__ == "__main__":
    main()
