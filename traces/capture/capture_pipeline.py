#!/usr/bin/env python3
"""Capture a pipeline-parallel GPT-3 training job: one process per stage.

GPT-3 (capture_gpt3.py's model and presets) is cut into S stages the way
`dvfsim run --parallel pp=S` cuts a single-GPU trace (stage s holds blocks
floor(s*L/S) .. floor((s+1)*L/S)-1, the embeddings on the first stage, the
final norm, head and loss on the last), and trained with 1F1B over M
microbatches (Megatron's order: S-s-1 warm-up forwards, then one forward and
one backward alternately, then the remaining backwards), activations and
gradients passed with torch.distributed point-to-point operations (NCCL,
sends paired with the opposite receives in one batch so that no two ranks
wait on each other), bf16 autocast, each stage its own fused AdamW step after
its last backward.

Every rank writes into --out:

  <tag>.rank<r>.measured.json     its GPU's NVML energy over a steady window
                                  of unprofiled iterations (the same fields
                                  as capture_gpt3.py: `dvfsim hw validate`
                                  reads it)
  <tag>.rank<r>.kineto.json.gz    its torch.profiler trace of
                                  --profile-steps iterations, each inside a
                                  ``ProfilerStep#<i>`` range
  <tag>.rank<r>.nvml_samples.csv  its GPU's NVML samples

and rank 0 writes <tag>.job.json: the schedule, the per-rank iteration time
and energy, the job's total energy per iteration and the iteration time.

NVML is used read-only (nvml_readonly.py): no clock, limit or mode is
changed. NVLink multicast stays off (NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 are forced in the
environment the ranks inherit).

One GPU: --share-gpu puts every rank on GPU 0 and passes the tensors through
the host with the gloo backend (NCCL refuses two ranks on one GPU). It checks
the schedule and the files, not the numbers: the ranks time-share one GPU,
only rank 0 measures energy (the whole GPU's), and the p2p copies are host
copies. --stages 1 is the degenerate pipeline: one process, M microbatches of
forward and backward (gradient accumulation) and the optimizer, the same
iteration `dvfsim run --parallel pp=1,microbatches=M` builds from a
single-GPU trace of one microbatch.

Example (4 GPUs):
  python3 capture_pipeline.py --stages 4 --microbatches 8 --micro-batch 2 --out out/
"""
import argparse
import gzip
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Multicast off before torch (and NCCL) are imported, in this process and in
# every process it starts.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(NO_MULTICAST)
os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import capture_gpt3 as g3  # noqa: E402
import kineto_steps as steps_lib  # noqa: E402
import nvml_readonly as nr  # noqa: E402


def stage_blocks(n_layer, stages, s):
    """Blocks [lo, hi) of stage s: dvfsim's default partition."""
    return (s * n_layer) // stages, ((s + 1) * n_layer) // stages


class Stage(nn.Module):
    """One pipeline stage of capture_gpt3.GPT: the same modules, so that a
    one-stage pipeline runs the single-GPU model's kernels."""

    def __init__(self, cfg, lo, hi, first, last):
        super().__init__()
        self.first, self.last = first, last
        if first:
            self.wte = nn.Embedding(cfg.vocab, cfg.d_model)
            self.wpe = nn.Embedding(cfg.max_seq, cfg.d_model)
        self.blocks = nn.ModuleList(g3.Block(cfg) for _ in range(lo, hi))
        if last:
            self.ln_f = nn.LayerNorm(cfg.d_model)
            self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, x):
        if self.first:
            pos = torch.arange(x.shape[1], device=x.device)
            x = self.wte(x) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        if self.last:
            x = self.head(self.ln_f(x))
        return x


class P2P:
    """Activation / gradient passing between neighbouring stages."""

    def __init__(self, rank, world, shape, device, host_copies):
        self.rank, self.world = rank, world
        self.shape, self.device = shape, device
        self.host = host_copies          # gloo: tensors go through the host
        self.first, self.last = rank == 0, rank == world - 1

    def _buf(self):
        return torch.empty(self.shape, dtype=torch.float32,
                           device="cpu" if self.host else self.device)

    def _run(self, sends, recvs):
        """sends: [(tensor, peer)], recvs: [(buffer, peer)]; one batch."""
        for t, _ in sends:
            if t.dtype != torch.float32 or tuple(t.shape) != self.shape:
                raise RuntimeError(f"rank {self.rank}: sending {t.dtype} {tuple(t.shape)}, "
                                   f"the peer expects float32 {self.shape}")
        if self.host:
            reqs = [dist.isend(t.detach().cpu(), p) for t, p in sends]
            reqs += [dist.irecv(b, p) for b, p in recvs]
            for r in reqs:
                r.wait()
        else:
            ops = [dist.P2POp(dist.isend, t.detach(), p) for t, p in sends]
            ops += [dist.P2POp(dist.irecv, b, p) for b, p in recvs]
            if ops:
                for r in dist.batch_isend_irecv(ops):
                    r.wait()
        return [b.to(self.device) if self.host else b for b, _ in recvs]

    def recv_forward(self):
        if self.first:
            return None
        x, = self._run([], [(self._buf(), self.rank - 1)])
        return x.requires_grad_()

    def send_forward(self, y):
        if not self.last:
            self._run([(y, self.rank + 1)], [])

    def recv_backward(self):
        if self.last:
            return None
        g, = self._run([], [(self._buf(), self.rank + 1)])
        return g

    def send_backward(self, g):
        if not self.first:
            self._run([(g, self.rank - 1)], [])

    def send_forward_recv_backward(self, y):
        if self.last:
            return None
        g, = self._run([(y, self.rank + 1)], [(self._buf(), self.rank + 1)])
        return g

    def send_backward_recv_forward(self, g):
        if self.first:
            return None
        x, = self._run([(g, self.rank - 1)], [(self._buf(), self.rank - 1)])
        return x.requires_grad_()


def make_iteration(stage, opt, p2p, stages, rank, m, idx, tgt, vocab):
    """One training iteration of stage `rank`: 1F1B over m microbatches
    (Megatron's pairing of sends and receives), then the optimizer."""

    def forward(mb, x):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = stage(idx[mb] if stage.first else x)
            if stage.last:
                y = F.cross_entropy(y.view(-1, vocab), tgt[mb].view(-1)) / m
        return y

    def backward(x, y, gy):
        if stage.last:
            y.backward()
        else:
            torch.autograd.backward(y, gy)
        return None if x is None else x.grad

    def iteration():
        warm = min(stages - rank - 1, m)
        rest = m - warm
        inputs, outputs = [], []
        fwd = 0
        for _ in range(warm):
            x = p2p.recv_forward()
            y = forward(fwd, x)
            fwd += 1
            p2p.send_forward(y)
            inputs.append(x)
            outputs.append(y)
        x = p2p.recv_forward() if rest > 0 else None
        for i in range(rest):
            y = forward(fwd, x)
            fwd += 1
            gy = p2p.send_forward_recv_backward(y)
            inputs.append(x)
            outputs.append(y)
            x0, y0 = inputs.pop(0), outputs.pop(0)
            gx = backward(x0, y0, gy)
            if i == rest - 1:
                x = None
                p2p.send_backward(gx)
            else:
                x = p2p.send_backward_recv_forward(gx)
        for _ in range(warm):
            x0, y0 = inputs.pop(0), outputs.pop(0)
            gy = p2p.recv_backward()
            gx = backward(x0, y0, gy)
            p2p.send_backward(gx)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return iteration


def worker(rank, args):
    world = args.stages
    dev_index = 0 if args.share_gpu else rank
    torch.cuda.set_device(dev_index)
    device = torch.device("cuda", dev_index)
    backend = args.backend or ("gloo" if args.share_gpu else "nccl")
    dist.init_process_group(backend, rank=rank, world_size=world,
                            init_method=f"tcp://127.0.0.1:{args.port}",
                            device_id=device if backend == "nccl" else None)
    dist.barrier()                        # every rank's communicator up before any p2p
    measures = not args.share_gpu or rank == 0
    gpu = nr.Gpu(dev_index)
    info = gpu.device_info()
    uuid_nvml = gpu.query("nvmlDeviceGetUUID")
    try:
        uuid_torch = str(torch.cuda.get_device_properties(dev_index).uuid)
    except Exception:
        uuid_torch = None
    if (isinstance(uuid_nvml, str) and uuid_nvml.startswith("GPU-") and uuid_torch
            and not uuid_nvml.removeprefix("GPU-").startswith(uuid_torch.removeprefix("GPU-"))):
        raise RuntimeError(f"rank {rank}: CUDA device {dev_index} is {uuid_torch} but NVML "
                           f"device {dev_index} is {uuid_nvml}: the energy would be another "
                           "GPU's (set CUDA_DEVICE_ORDER=PCI_BUS_ID, unset CUDA_VISIBLE_DEVICES)")
    sampler = nr.Sampler(gpu, args.sample_ms / 1e3)
    if measures:
        sampler.start()

    cfg = g3.PRESETS[args.preset]
    if args.seq > cfg.max_seq:
        cfg = g3.GPTConfig(**{**asdict(cfg), "max_seq": args.seq})
    lo, hi = stage_blocks(cfg.n_layer, world, rank)
    torch.manual_seed(args.seed + rank)
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed + rank)
    with torch.device(device):
        stage = Stage(cfg, lo, hi, rank == 0, rank == world - 1)
    n_params = sum(p.numel() for p in stage.parameters())
    opt = torch.optim.AdamW(stage.parameters(), lr=1e-4, fused=True)
    m = args.microbatches
    shape = (args.micro_batch, args.seq)
    idx = [torch.randint(0, cfg.vocab, shape, device=device, generator=gen) for _ in range(m)]
    tgt = [torch.randint(0, cfg.vocab, shape, device=device, generator=gen) for _ in range(m)]
    p2p = P2P(rank, world, (args.micro_batch, args.seq, cfg.d_model), device,
              host_copies=backend == "gloo")
    iteration = make_iteration(stage, opt, p2p, world, rank, m, idx, tgt, cfg.vocab)

    sampler.phase = "warmup"
    # Every rank must run the same number of iterations: rank 0's estimate.
    plan = [g3.warmup_step_time(iteration, args.warmup)]
    dist.broadcast_object_list(plan, src=0)
    step_est = plan[0]
    n_win = max(args.min_steps, math.ceil(args.window_s / max(step_est, 1e-4)))
    if rank == 0:
        print(f"pipeline S={world} M={m}: iteration ~{step_est * 1e3:.1f} ms, "
              f"window {n_win} iterations", flush=True)

    # capture_gpt3's window: >= 0.35 s of identical iterations on each side;
    # every rank computes the same guard from the broadcast estimate.
    dist.barrier()
    bounds, guard, (w0, w1) = g3.measure_window(iteration, n_win, sampler, step_est)
    dist.barrier()
    time.sleep(0.25)                      # let the counter tick past the window
    i0, i1 = guard, guard + n_win
    fields = {}
    if measures:
        rows = sampler.snapshot()
        fields = nr.window_fields(rows, bounds, i0, i1)
    it_times = [bounds[i + 1] - bounds[i] for i in range(i0, i1)]

    sampler.phase = "profile"
    dist.barrier()
    fd, raw = tempfile.mkstemp(suffix=f".rank{rank}.json")
    os.close(fd)
    steps_lib.profile_steps(iteration, args.profile_steps, raw)
    sampler.phase = "export"
    stats = steps_lib.trace_stats(raw)
    tag = args.tag
    kpath = os.path.join(args.out, f"{tag}.rank{rank}.kineto.json.gz")
    with open(raw, "rb") as f, gzip.open(kpath, "wb", compresslevel=6) as gz:
        shutil.copyfileobj(f, gz)
    os.unlink(raw)
    sampler.phase = "end"
    time.sleep(0.02)
    if measures:
        sampler.stop()

    t_it = (bounds[i1] - bounds[i0]) / n_win
    measured = {
        "name": info["name"], "driver": info["driver"], "uuid": uuid_nvml,
        "torch_device_uuid": uuid_torch, "cuda_device": dev_index,
        "power_limit_mW": info["power_limit_mW"],
        "rank": rank, "stage": rank, "stages": world, "microbatches": m,
        "blocks": [lo, hi], "first_stage": rank == 0, "last_stage": rank == world - 1,
        "shared_gpu": bool(args.share_gpu), "energy_measured": measures,
        "time_per_step_s": t_it,
        "step_time_s_min_max": [min(it_times), max(it_times)],
        "guard_steps_each_side": guard, "warmup_steps": args.warmup,
        "host_wall_s_all_measured_steps": w1 - w0,
        "model": {**asdict(cfg), "preset": args.preset, "n_params_stage": n_params,
                  "micro_batch": args.micro_batch, "seq": args.seq,
                  "dtype": "fp32 params, bf16 autocast", "optimizer": "AdamW(fused)",
                  "schedule": "1f1b", "backend": backend},
        "peak_mem_GB": torch.cuda.max_memory_allocated(device) / 1e9,
        "profile": {"profiled_steps": args.profile_steps, "profiler_warmup_steps": 1, **stats},
        "software": {"torch": torch.__version__, "cuda": torch.version.cuda,
                     "nccl": ".".join(map(str, torch.cuda.nccl.version()))
                     if backend == "nccl" else None},
        "environment": {k: os.environ.get(k) for k in NO_MULTICAST},
        "date_utc": time.strftime("%Y-%m-%d", time.gmtime()),
        "tool": "traces/capture/capture_pipeline.py",
    }
    if measures:
        measured.update({
            **fields,
            "sampler": {"period_s": args.sample_ms / 1e3, "rows": len(sampler.rows),
                        "errors": sampler.errors},
        })
        with open(os.path.join(args.out, f"{tag}.rank{rank}.nvml_samples.csv"), "w") as f:
            nr.write_samples_csv(sampler.rows, f)
    with open(os.path.join(args.out, f"{tag}.rank{rank}.measured.json"), "w") as f:
        json.dump(measured, f, indent=1)

    mine = {k: measured.get(k) for k in ("rank", "blocks", "uuid", "time_per_step_s",
                                          "energy_per_step_j", "mean_power_w", "mean_sm_mhz",
                                          "clock_event_reasons", "energy_measured",
                                          "peak_mem_GB")}
    mine["kernels_per_step"] = [s["kernels"] for s in stats["steps"]]
    mine["gpu_busy_ms_per_step"] = [s["gpu_busy_ms"] for s in stats["steps"]]
    gathered = [None] * world
    dist.all_gather_object(gathered, mine)
    if rank == 0:
        uuids = [r["uuid"] for r in gathered]
        if not args.share_gpu and len(set(uuids)) != len(uuids):
            print("warning: two ranks report the same GPU", flush=True)
        energies = [r["energy_per_step_j"] for r in gathered if r["energy_measured"]]
        job = {
            "tag": tag, "stages": world, "microbatches": m, "schedule": "1f1b",
            "preset": args.preset, "micro_batch": args.micro_batch, "seq": args.seq,
            "shared_gpu": bool(args.share_gpu), "backend": backend,
            "time_per_iteration_s": max(r["time_per_step_s"] for r in gathered),
            "energy_per_iteration_j": sum(energies) if energies else None,
            "energy_note": ("one GPU shared by every rank: rank 0's figure is the whole GPU's"
                            if args.share_gpu else "sum of the ranks' GPUs"),
            "per_rank": gathered,
            "dvfsim": f"--parallel pp={world},microbatches={m},schedule=1f1b",
            "date_utc": measured["date_utc"], "tool": measured["tool"],
        }
        with open(os.path.join(args.out, f"{tag}.job.json"), "w") as f:
            json.dump(job, f, indent=1)
        e = job["energy_per_iteration_j"]
        print(f"{tag}: {job['time_per_iteration_s'] * 1e3:.2f} ms/iteration, "
              f"{e if e is not None else float('nan'):.2f} J/iteration; per rank "
              + ", ".join(f"r{r['rank']} {r['time_per_step_s'] * 1e3:.1f} ms "
                          f"{(r['energy_per_step_j'] or float('nan')):.1f} J "
                          f"busy {r['gpu_busy_ms_per_step']}" for r in gathered), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description="pipeline-parallel GPT-3 capture: one Kineto "
                                 "trace and one NVML energy window per rank (read-only)")
    ap.add_argument("--stages", type=int, required=True, help="pipeline stages S (= ranks)")
    ap.add_argument("--microbatches", type=int, default=8, help="microbatches M per iteration")
    ap.add_argument("--preset", choices=sorted(g3.PRESETS), default="xl")
    ap.add_argument("--micro-batch", type=int, default=2, help="sequences per microbatch")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=3, help="untimed iterations first")
    ap.add_argument("--window-s", type=float, default=2.5, help="energy window length")
    ap.add_argument("--min-steps", type=int, default=3, help="iterations in the window, at least")
    ap.add_argument("--profile-steps", type=int, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="")
    ap.add_argument("--share-gpu", action="store_true",
                    help="every rank on GPU 0, p2p through the host (gloo): a test of the "
                         "schedule and the files on one GPU")
    ap.add_argument("--backend", choices=("nccl", "gloo"), default=None,
                    help="default: nccl, gloo with --share-gpu")
    ap.add_argument("--sample-ms", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--port", type=int, default=29517)
    args = ap.parse_args()
    cfg = g3.PRESETS[args.preset]
    if not 1 <= args.stages <= cfg.n_layer:
        ap.error(f"--stages {args.stages}: the {args.preset} model has {cfg.n_layer} blocks")
    if args.microbatches < 1:
        ap.error("--microbatches must be at least 1")
    if args.backend == "nccl" and args.share_gpu and args.stages > 1:
        ap.error("--share-gpu needs the gloo backend: NCCL refuses two ranks on one GPU")
    gpus = torch.cuda.device_count()
    if not args.share_gpu and args.stages > gpus:
        ap.error(f"--stages {args.stages} needs {args.stages} GPUs, {gpus} visible "
                 "(--share-gpu tests the schedule on one)")
    args.tag = args.tag or (f"gpt3{args.preset.replace('.', '')}_pp{args.stages}_m{args.microbatches}"
                            f"_b{args.micro_batch}_t{args.seq}" + ("_shared" if args.share_gpu else ""))
    os.makedirs(args.out, exist_ok=True)
    if args.stages == 1:
        worker(0, args)
    else:
        mp.spawn(worker, args=(args,), nprocs=args.stages, join=True)


if __name__ == "__main__":
    main()
