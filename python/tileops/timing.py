"""How tileops times GPU work, for the tuner (`op.request_tune()`) and `tileops bench` alike.

Each run is bracketed by CUDA events, after the L2 is flushed by reading a buffer larger than it
(a read leaves clean lines; a write flush leaves dirty lines that the timed run then pays to write
back). The flush reads at L2 evict_last priority: lines loaded at that priority, as Inductor's
reductions load their inputs, outlast a plain read of any size, so torch.compile's decode-row
kernels ran partly warm after a `buf.sum()` flush (H100: RMSNorm 16 x 4096's Triton
kernel took 1.76 us after it, 2.46 after this one).
A device-side sleep first lets the host queue every run ahead of the GPU, so the host's launch
cost stays out of the events: without it a 4 us decode kernel measured 8-9 us through the Python
launch path, every config alike, and the tuner's choice among them was noise (H100:
RMSNorm 16 x 8192 tuned to a config 0.67x torch.compile).
"""

from __future__ import annotations

import functools
import statistics

import torch

FLUSH_BYTES = 256 << 20  # over four times the H200's 60 MB of L2
# Names this method in the tuner's cache key (op.tune_version): a choice timed another way (before
# the host was queued ahead, choices among decode configs were launch-overhead noise) is retuned.
METHOD = "evict-last-flushed-queued-events.2"
FLUSH_BLOCK = 8192  # float32 elements a flush program reads


def flush_buffer(device=None) -> torch.Tensor:
    """A buffer whose read evicts the L2 (FLUSH_BYTES on `device`, the current one by default)."""
    return torch.ones(FLUSH_BYTES // 4, dtype=torch.float32, device=device or "cuda")


@functools.cache
def _evict_last_reader():
    """The flush kernel, built on first use (Triton ships with torch where there is a GPU)."""
    import triton
    import triton.language as tl

    @triton.jit
    def read_evict_last(src, partial, n, BLOCK: tl.constexpr):
        # Each program sums its BLOCK floats into partial[pid]: the loads must be used, and the
        # only write is one float a program (no dirty lines to speak of).
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(src + offs, mask=offs < n, other=0.0, eviction_policy="evict_last")
        tl.store(partial + pid, tl.sum(v, axis=0))

    return read_evict_last


def flush_l2(buf: torch.Tensor) -> torch.Tensor:
    """Reads float32 `buf` at L2 evict_last priority on the current stream; returns the
    per-program sums (their total is buf.sum())."""
    programs = -(-buf.numel() // FLUSH_BLOCK)
    partial = torch.empty(programs, dtype=torch.float32, device=buf.device)
    _evict_last_reader()[(programs,)](buf, partial, buf.numel(), BLOCK=FLUSH_BLOCK)
    return partial


def time_alternating(fns: list, runs: int, flush, *, warmup: int = 5, settle=None,
                     host_lead_cycles: int = 50_000_000) -> list[list[float]]:
    """Microseconds of `runs` calls of each of `fns` on the current stream, per fn in call order.

    Cycle r calls every fn once, each after its own flush, starting from fns[r % len(fns)]: drift
    during the measurement (clocks, temperature, the host) falls on every fn alike, and the i-th
    times of two fns come from calls made moments apart, so their ratio can be taken per cycle.
    `flush`: the buffer flush_l2 reads before each run, or a callable that flushes (diagnostics).
    `settle`: an untimed call between the flush and the start event (diagnostics).
    `host_lead_cycles`: the device sleep per fn before the timed runs (50M cycles: about 25 ms),
    long enough for the host to queue every run's flush, events and call.
    """
    flush_now = flush if callable(flush) else functools.partial(flush_l2, flush)
    for fn in fns:
        for _ in range(warmup):
            fn()
    flush_now()  # the flush kernel compiled before the timed runs
    torch.cuda.synchronize()
    n = len(fns)
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(runs)] for _ in fns]
    torch.cuda._sleep(host_lead_cycles * n)
    for r in range(runs):
        for k in range(n):
            i = (r + k) % n
            flush_now()
            if settle is not None:
                settle()
            start, end = events[i][r]
            start.record()
            fns[i]()
            end.record()
    torch.cuda.synchronize()
    return [[s.elapsed_time(e) * 1e3 for s, e in per_fn] for per_fn in events]


def time_runs(fn, runs: int, flush, **kwargs) -> list[float]:
    """Microseconds of `runs` calls of `fn`, sorted (time_alternating with one fn)."""
    return sorted(time_alternating([fn], runs, flush, **kwargs)[0])


def paired_ratio(base_us: list[float], us: list[float]) -> dict:
    """Median and p10-p90 over cycles of base_us[i] / us[i] (> 1: `us` is faster), for two fns
    timed in one time_alternating call."""
    if len(base_us) != len(us) or len(us) < 2:
        raise ValueError("paired_ratio needs two equally long series of at least 2 runs")
    s = summary(sorted(b / t for b, t in zip(base_us, us)))
    return {"ratio": s["median_us"], "ratio_p10": s["p10_us"], "ratio_p90": s["p90_us"],
            "pairs": len(us)}


def summary(us: list[float]) -> dict:
    """Median and p10-p90 of sorted microsecond timings."""
    q = statistics.quantiles(us, n=10, method="inclusive")
    return {"median_us": statistics.median(us), "p10_us": q[0], "p90_us": q[-1], "runs": len(us)}
