#!/usr/bin/env python3
"""The tensor-core convolutions' L2 traffic beyond a GEMM's, priced offline
(docs/validation.md, "Instructions of the tensor-core convolutions", "Their
L2 traffic"). For each capture of table.py: Nsight Compute's L2 bytes of the
paired convolution kernels of one step, the part above BASE bytes per FLOP
(a GEMM's: cuBLAS's kernels in the BERT-base and Llama-1B prefill steps move
0.0081-0.0091 B/FLOP through L2, which the tensor term's calibration on GEMMs
carries), that part priced at the copies' 23.5 pJ per byte of L2 traffic
beyond streaming (models/devices/h200.yaml `l2_excess_w_per_v2ghz` over
`l2_bytes_per_clock` at 1.00 V: fitted on copies, not on these), and the
energy error as shipped and with ncu's bytes in place of what the model
estimates from the kernels' tiles (since 2026-12-06, `conv_l2_bytes_per_flop`
in traces/annotate.h; the trace's `l2_excess_bytes` of those kernels).
Nothing here changes the model.

  python3 validation/h200/convncu/l2_traffic.py [--base 0.0085] [--dvfsim build/apps/dvfsim]
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
from ncu_utilisation import GEMM_L2_BYTES_PER_FLOP, l2_excess_joules_per_byte, paired  # noqa: E402
from table import CAPTURES, tensor_conv  # noqa: E402
from validation_table import pct, validate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=float, default=GEMM_L2_BYTES_PER_FLOP, help="a GEMM's L2 bytes per FLOP")
    ap.add_argument("--dvfsim", default=os.path.join(ROOT, "build", "apps", "dvfsim"))
    args = ap.parse_args()
    print("| capture | bound | convolution L2 TB/s | L2 B/FLOP | beyond a GEMM's, J per step: ncu / the model's "
          "| energy: as shipped | with ncu's bytes |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="dvfsim_l2conv_") as tmp:
        for label, stem, ncu, bound, regex in CAPTURES:
            pairs = [(k, r) for k, r in paired(args.dvfsim, tmp, stem, ncu, regex) if tensor_conv(k["name"])]
            ns = sum(float(r["duration_ns"]) for _, r in pairs)
            l2 = sum(float(r["l2_bytes"]) for _, r in pairs)
            flops = sum(k["flops"] for k, _ in pairs)
            beyond = sum(max(0.0, float(r["l2_bytes"]) - args.base * k["flops"]) for k, r in pairs)
            modelled = sum(k["l2_excess"] for k, _ in pairs)
            d, error = validate(args.dvfsim, os.path.join(ROOT, stem))
            if d is None:
                sys.exit(f"dvfsim hw validate {stem}: {error}")
            e = d["predicted"]["energy_error_pct"]
            de = l2_excess_joules_per_byte() * beyond
            dm = l2_excess_joules_per_byte() * modelled
            with_it = (d["predicted"]["energy_per_iteration_j"] + de - dm) / d["measured"]["energy_per_iteration_j"]
            print(f"| {label} | {bound} | {l2 / ns / 1e3:.2f} | {l2 / flops:.4f} | {de:.3f} / {dm:.3f} | {pct(e)} | "
                  f"{pct(100 * (with_it - 1))} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
