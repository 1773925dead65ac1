"""Where the RoPE prefill row loses bandwidth: the same kernel timed through the op, through the
raw launcher, per config, with q/k separate or interleaved, under three L2-flush methods, next to
an in-place streaming reference of the same bytes. Diagnostic only (not a test)."""

import statistics
import sys

import torch

from tileops.ops import RoPENeoXFwdOp
from tileops.references import rope_neox

S, HQ, HK, D, P, R = 8192, 32, 8, 128, 8192, 128
BYTES = 2 * S * (HQ + HK) * D * 2 + S * 8 + S * R * 4
flush_u8 = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
flush_f = torch.ones(64 << 20, dtype=torch.float32, device="cuda")


def timeit(fn, flush="zero", runs=100):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    st = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    torch.cuda._sleep(100_000_000)
    for s, e in zip(st, en):
        if flush == "zero":
            flush_u8.zero_()
        elif flush == "read":
            flush_f.sum()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    us = sorted(s.elapsed_time(e) * 1e3 for s, e in zip(st, en))
    return statistics.median(us), us[runs // 10], us[-runs // 10]


def line(name, t, nbytes=BYTES):
    med, p10, p90 = t
    print(f"{name:<52} {med:8.1f} us ({p10:.1f}-{p90:.1f})  {nbytes / med / 1e6:6.3f} TB/s  "
          f"{100 * nbytes / med / 1e6 / 4.24:5.1f}% of 4.24", flush=True)


def main():
    op = RoPENeoXFwdOp()
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, R, 2, dtype=torch.float64, device="cuda") / R))
    angles = torch.arange(P, dtype=torch.float64, device="cuda")[:, None] * inv_freq[None, :]
    cache = torch.cat([angles.cos(), angles.sin()], dim=-1).float()
    pos_rand = torch.randint(0, P, (S,), device="cuda")
    pos_perm = (torch.arange(S, device="cuda") * 7919) % P
    q = torch.randn(S, HQ, D, device="cuda").bfloat16()
    k = torch.randn(S, HK, D, device="cuda").bfloat16()
    qk = torch.randn(S, HQ + HK, D, device="cuda").bfloat16()
    qi, ki = qk[:, :HQ], qk[:, HQ:]
    stream = torch.cuda.current_stream().cuda_stream
    op(pos_rand, q, k, cache)  # binds and loads the launcher

    def raw(pos, qq, kk, config):
        return lambda: op._launch(None, (pos, qq, kk, cache), [], config, stream)

    # Every config against the reference, on the row's shape and on an interleaved q/k view.
    for qq, kk, label in ((q, k, "separate"), (qi, ki, "interleaved")):
        want = [t.float() for t in rope_neox(pos_rand.cpu(), qq.cpu().double(),
                                             kk.cpu().double(), cache.cpu())]
        for config in range(-1, 5):
            a, b = qq.clone(), kk.clone()
            op._launch(None, (pos_rand, a, b, cache), [], config, stream)
            torch.cuda.synchronize()
            err = max((a.float().cpu() - want[0]).abs().max().item(),
                      (b.float().cpu() - want[1]).abs().max().item())
            print(f"check config {config} {label}: max abs err {err:.4f} "
                  f"{'ok' if err < 0.05 else 'MISMATCH'}", flush=True)

    x = torch.randn(S * (HQ + HK) * D, device="cuda").bfloat16()
    for flush in ("zero", "read", "none"):
        print(f"--- flush={flush}")
        line("in-place x.mul_(1.0) same bytes (streaming ref)", timeit(lambda: x.mul_(1.0), flush),
             2 * x.numel() * 2)
        line("op(pos_rand, q, k) separate (as tileops bench)",
             timeit(lambda: op(pos_rand, q, k, cache), flush))
        for config in range(-1, 5):
            line(f"raw config {config} separate pos_rand", timeit(raw(pos_rand, q, k, config), flush))
        line("raw config -1 separate pos_perm", timeit(raw(pos_perm, q, k, -1), flush))
        line("raw config -1 interleaved pos_perm", timeit(raw(pos_perm, qi, ki, -1), flush))
        line("raw config 0 interleaved pos_perm", timeit(raw(pos_perm, qi, ki, 0), flush))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            flush_u8.zero_()
            op(pos_rand, q, k, cache)
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=8))
    return 0


if __name__ == "__main__":
    sys.exit(main())
