"""Where the decode rows lose to torch.compile (0.81-0.97x on the H200 at 4-6 us, every config
alike): each op and its torch.compile'd twin on the decode shapes, a few launches each, meant to
run under Nsight Compute so the kernels' own durations, instruction counts and DRAM bytes can be
set side by side:

    ncu --clock-control none --csv --metrics gpu__time_duration.sum,smsp__inst_executed.sum,\
dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,\
launch__registers_per_thread python3 scripts/gpu/decode_probe.py --runs 2 > decode_probe.csv

It also prints CUDA-event medians of the same calls (the L2 flushed by a read before each, as
tileops bench does). Diagnostic only (not a test)."""

import statistics
import sys

import torch

from tileops.activation import SiluAndMulFwdOp
from tileops.norm import LayerNormFwdOp, RMSNormFwdOp


def cases():
    dt, dev = torch.bfloat16, "cuda"
    x4, x8 = torch.randn(16, 4096, device=dev, dtype=dt), torch.randn(16, 8192, device=dev, dtype=dt)
    w4, w8 = torch.randn(4096, device=dev, dtype=dt), torch.randn(8192, device=dev, dtype=dt)
    b4 = torch.randn(4096, device=dev, dtype=dt)
    xs = torch.randn(16, 2 * 14336, device=dev, dtype=dt)
    rms, ln, silu = RMSNormFwdOp(eps=1e-6), LayerNormFwdOp(eps=1e-5), SiluAndMulFwdOp()

    def rms_ref(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

    def silu_ref(x):
        g, u = x.chunk(2, -1)
        return torch.nn.functional.silu(g) * u

    ln_ref = lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)  # noqa: E731
    return [
        ("rms 16x4096", lambda: rms(x4, w4), torch.compile(rms_ref), (x4, w4)),
        ("rms 16x8192", lambda: rms(x8, w8), torch.compile(rms_ref), (x8, w8)),
        ("layernorm 16x4096", lambda: ln(x4, w4, b4), torch.compile(ln_ref), (x4, w4, b4)),
        ("silu_and_mul 16x14336", lambda: silu(xs), torch.compile(silu_ref), (xs,)),
    ]


def main() -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=200, help="timed calls per side (2 under ncu)")
    runs = p.parse_args().runs
    flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")
    for name, ours, compiled, args in cases():
        for label, fn in (("tileops", ours), ("torch.compile", lambda: compiled(*args))):
            for _ in range(3):
                fn()  # compiles, binds, warms
            torch.cuda.synchronize()
            times = []
            for _ in range(runs):
                flush.sum()  # the L2 flushed by a read, as tileops bench does
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e) * 1e3)
            print(f"{name:<24} {label:<14} {statistics.median(times):6.2f} us", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
