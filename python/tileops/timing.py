"""How tileops times GPU work, for the tuner (`op.request_tune()`) and `tileops bench` alike.

Each run is bracketed by CUDA events, after the L2 is flushed by reading a buffer larger than it
(a read leaves clean lines; a write flush leaves dirty lines that the timed run then pays to write
back). The flush reads at L2 evict_last priority: lines loaded at that priority, as Inductor's
reductions load their inputs, outlast a plain read of any size, so torch.compile's decode-row
kernels ran partly warm after a `buf.sum()` flush (H100, 2026-12-07: RMSNorm 16 x 4096's Triton
kernel took 1.76 us after it, 2.46 after this one; bench/results/h100-decode-probe.txt).
A device-side sleep first lets the host queue every run ahead of the GPU, so the host's launch
cost stays out of the events: without it a 4 us decode kernel measured 8-9 us through the Python
launch path, every config alike, and the tuner's choice among them was noise (H100, 2026-12-07:
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


def time_runs(fn, runs: int, flush, *, warmup: int = 5, settle=None,
              host_lead_cycles: int = 50_000_000) -> list[float]:
    """Microseconds of `runs` calls of `fn` on the current stream, sorted.

    `flush`: the buffer flush_l2 reads before each run, or a callable that flushes (diagnostics).
    `settle`: an untimed call between the flush and the start event (diagnostics).
    `host_lead_cycles`: the device sleep before the timed runs (50M cycles: about 25 ms), long
    enough for the host to queue every run's flush, events and call.
    """
    flush_now = flush if callable(flush) else functools.partial(flush_l2, flush)
    for _ in range(warmup):
        fn()
    flush_now()  # the flush kernel compiled before the timed runs
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    torch.cuda._sleep(host_lead_cycles)
    for start, end in zip(starts, ends):
        flush_now()
        if settle is not None:
            settle()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return sorted(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))


def summary(us: list[float]) -> dict:
    """Median and p10-p90 of sorted microsecond timings."""
    q = statistics.quantiles(us, n=10, method="inclusive")
    return {"median_us": statistics.median(us), "p10_us": q[0], "p90_us": q[-1], "runs": len(us)}
