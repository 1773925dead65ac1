"""How GPU work is timed: by the tuner (`op.request_tune()`), `tileops bench` and Tilesmith.

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

This is the one measurement module of both products (tilesmith-ai depends on tileops); the five
instruments differ only in what they must see:
- `tileops bench` and the tuner: time_alternating / time_runs as above.
- the Tilesmith gate's worker: flush_buffer + flush_l2 before each ABBA sample. Its sampling
  loop stays its own: the device is synchronized inside each interval (work on any stream
  counts), buffers are refilled and outputs checked between samples, and it calls only what a
  candidate cannot redirect unnoticed.
- `tilesmith bench`: time_alternating over whole steps with no flush and the device synchronized
  before each step (host_lead_cycles=None), since launch overhead is part of what its columns
  differ in.
- Tilesmith's in-place check: the user's own calls, nothing added around them.
Every paired figure comes from one estimator, ts::perf::paired_stats (the median of the per-pair
log ratios with a distribution-free confidence interval): paired_ratio here, the gate's verdict
and the in-place check call it.
"""

from __future__ import annotations

import functools
import statistics
import time

import torch

from tileops import _core

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
                     host_lead_cycles: int | None = 50_000_000,
                     device=None) -> list[list[float]]:
    """Microseconds of `runs` calls of each of `fns` on the current stream, per fn in call order.

    Cycle r calls every fn once, each after its own flush, starting from fns[r % len(fns)]: drift
    during the measurement (clocks, temperature, the host) falls on every fn alike, and the i-th
    times of two fns come from calls made moments apart, so their ratio can be taken per cycle.
    `flush`: the buffer flush_l2 reads before each run, a callable that flushes (diagnostics), or
    None (whole program steps, which run after one another with the L2 as the last one left it).
    `settle`: an untimed call between the flush and the start event (diagnostics).
    `host_lead_cycles`: the device sleep per fn before the timed runs (50M cycles: about 25 ms),
    long enough for the host to queue every run's flush, events and call. None synchronizes the
    device before each start event instead, so the host's launch cost is inside the interval.
    `device`: the CUDA device to synchronize (the current one by default); a CPU device times
    each call by the host's clock (tests, CPU programs).
    """
    if flush is None or callable(flush):
        flush_now = flush
    else:
        flush_now = functools.partial(flush_l2, flush)
    cpu = device is not None and torch.device(device).type == "cpu"
    for fn in fns:
        for _ in range(warmup):
            fn()
    n = len(fns)
    if cpu:
        us = [[0.0] * runs for _ in fns]
    else:
        if flush_now is not None:
            flush_now()  # the flush kernel compiled before the timed runs
        torch.cuda.synchronize(device)
        events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                   for _ in range(runs)] for _ in fns]
        if host_lead_cycles is not None:
            torch.cuda._sleep(host_lead_cycles * n)
    for r in range(runs):
        for k in range(n):
            i = (r + k) % n
            if flush_now is not None:
                flush_now()
            if settle is not None:
                settle()
            if cpu:
                t0 = time.perf_counter()
                fns[i]()
                us[i][r] = (time.perf_counter() - t0) * 1e6
                continue
            if host_lead_cycles is None:
                torch.cuda.synchronize(device)
            start, end = events[i][r]
            start.record()
            fns[i]()
            end.record()
    if cpu:
        return us
    torch.cuda.synchronize(device)
    return [[s.elapsed_time(e) * 1e3 for s, e in per_fn] for per_fn in events]


def time_runs(fn, runs: int, flush, **kwargs) -> list[float]:
    """Microseconds of `runs` calls of `fn`, sorted (time_alternating with one fn)."""
    return sorted(time_alternating([fn], runs, flush, **kwargs)[0])


def paired_ratio(base_us: list[float], us: list[float], *, confidence: float = 0.95) -> dict:
    """base_us[i] / us[i] over the cycles of one time_alternating call (> 1: `us` is faster):
    `ratio`, the median over cycles (for an odd number, the middle cycle's ratio), `ratio_p10`
    and `ratio_p90` of the per-cycle ratios, and `ratio_lower`-`ratio_upper`, the median's
    confidence interval, all in that orientation. The interval is at the level asked for where
    there are enough cycles (6 for 95%), else [min, max]; `confidence` is its coverage.
    The estimator is ts::perf::paired_stats, the gate's (on log ratios, order statistics only).
    Times must be finite and positive (ValueError)."""
    if len(base_us) != len(us) or len(us) < 2:
        raise ValueError("paired_ratio needs two equally long series of at least 2 runs")
    # paired_stats reports candidate / baseline: `us` as its baseline gives base_us / us.
    s = _core.paired_stats([float(t) for t in us], [float(t) for t in base_us],
                           confidence=confidence)
    return {"ratio": s.ratio, "ratio_p10": s.ratio_p10, "ratio_p90": s.ratio_p90,
            "ratio_lower": s.ratio_lower, "ratio_upper": s.ratio_upper,
            "confidence": s.confidence, "pairs": s.n}


def summary(us: list[float]) -> dict:
    """Median and p10-p90 of sorted microsecond timings."""
    q = statistics.quantiles(us, n=10, method="inclusive")
    return {"median_us": statistics.median(us), "p10_us": q[0], "p90_us": q[-1], "runs": len(us)}
