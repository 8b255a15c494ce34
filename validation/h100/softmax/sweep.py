#!/usr/bin/env python3
"""Softmax and log-softmax over rows of several widths and dtypes, forward
and backward, for Nsight Compute (`run.sh`): one launch of each kernel
inside cudaProfilerStart/Stop, after one warm-up pass. Prints the cases in
launch order, one line each: TAG ROWS WIDTH DTYPE OUT_DTYPE OP.

  python3 sweep.py            (under ncu --profile-from-start off)
"""
import torch

ROWS = 16384
# (tag, rows, width, input dtype, log-softmax output dtype or None, op)
CASES = [
    ("f32_w8000", ROWS, 8000, torch.float32, None, "log"),      # fits shared memory
    ("f32_w16000", ROWS, 16000, torch.float32, None, "log"),
    ("f32_w24000", ROWS, 24000, torch.float32, None, "log"),
    ("f32_w32000", ROWS, 32000, torch.float32, None, "log"),
    ("f32_w50257", ROWS, 50257, torch.float32, None, "log"),
    ("f32_w65536", ROWS, 65536, torch.float32, None, "log"),
    ("f32_w131072", 4096, 131072, torch.float32, None, "log"),
    ("f32_w32000_r128", 128, 32000, torch.float32, None, "log"),  # every row resident
    ("bf16_w32000", ROWS, 32000, torch.bfloat16, None, "log"),
    ("bf16_w50304", ROWS, 50304, torch.bfloat16, None, "log"),
    ("bf16_w131072", 4096, 131072, torch.bfloat16, None, "log"),
    ("bf16to32_w50304", ROWS, 50304, torch.bfloat16, torch.float32, "log"),
    ("f32_w32000_softmax", ROWS, 32000, torch.float32, None, "softmax"),
]


def run(rows, width, dtype, out_dtype, op):
    x = torch.randn(rows, width, device="cuda", dtype=dtype, requires_grad=True)
    if op == "log":
        y = torch.log_softmax(x, -1, dtype=out_dtype)
    else:
        y = torch.softmax(x, -1)
    y.backward(torch.randn_like(y))
    return x


def main():
    torch.manual_seed(0)
    for tag, rows, width, dtype, out_dtype, op in CASES:
        run(rows, width, dtype, out_dtype, op)  # warm-up, not profiled
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        run(rows, width, dtype, out_dtype, op)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        torch.cuda.empty_cache()
        out = str(out_dtype or dtype).replace("torch.", "")
        print(tag, rows, width, str(dtype).replace("torch.", ""), out, op, flush=True)


if __name__ == "__main__":
    main()
