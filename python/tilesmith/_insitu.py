"""The last check of an installed candidate: in place, on the user's own calls.

The gate times each graph in isolation (L2 flushed, device synchronized inside each sample), which
is what makes its verdict hard to fool; a program runs the graph back to back with a warm L2 and
the host launching ahead. A candidate can win there and lose here (seen on the H200: a depthwise
conv graph confirmed at 1.33x ran 0.83x end to end). So for its first calls after installation a
graph alternates the original and the candidate (ABBA), each call bracketed by CUDA events on the
current stream and nothing else: no synchronization is added, so each interval is what the call
costs in that program (its kernels, plus any launch gaps the GPU had to wait through). The events
are read as they complete. After `pairs` timed pairs, a candidate whose median paired ratio is not
below 1 is rolled back.

Both sides are equivalent (the gate checked outputs, aliasing, mutations and RNG draws), so the
user's results do not depend on which one ran a given call.
"""

from __future__ import annotations

import os
import time

import torch

DEFAULT_PAIRS = 24
WARMUP_PAIRS = 2  # first calls of a side may capture a CUDA graph or fill a cache


def pairs_from_env(device: str) -> int:
    """TILESMITH_INSITU_PAIRS, or the default: DEFAULT_PAIRS on CUDA, off on the CPU (CPU graphs
    are admitted only for tests, where the order of two equal timings is a coin toss)."""
    raw = os.environ.get("TILESMITH_INSITU_PAIRS", "").strip()
    if not raw:
        return DEFAULT_PAIRS if device == "cuda" else 0
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"TILESMITH_INSITU_PAIRS={raw!r}: expected a whole number of pairs "
                         "(0 turns the in-place check off)") from None
    if n < 0:
        raise ValueError(f"TILESMITH_INSITU_PAIRS={raw!r}: must be >= 0")
    return n


class InPlaceCheck:
    """Callable that stands in for the graph while the check runs.

    decide(stats | None) is called once with _core.PairedStats over (original, candidate) call
    times in ms (ratio = candidate / original), or None when the check could not time (e.g. every
    call happened under CUDA-graph capture); it installs the final callable.
    """

    def __init__(self, original, candidate, device: str, pairs: int, decide):
        self.original = original
        self.candidate = candidate
        self.cuda = device == "cuda" and torch.cuda.is_available()
        self.pairs = pairs
        self._decide = decide
        self._calls = 0
        self._pending: list = []  # (pair, side, start event, end event), not yet complete
        self._times: dict[int, dict[str, float]] = {}
        self.done = False

    def abandon(self, replacement) -> None:
        """The candidate failed (and was rolled back): no verdict; calls go to `replacement`."""
        self.done = True
        self.candidate = replacement

    def _side(self) -> tuple[int, str]:
        i = self._calls
        pair, first = divmod(i, 2)
        a_first = pair % 4 in (0, 3)  # ABBA BAAB ...
        return pair, ("A" if (first == 0) == a_first else "B")

    def __call__(self, args):
        if self.done:
            return self.candidate(args)
        if self.cuda and torch.cuda.is_current_stream_capturing():
            return self.candidate(args)  # no events inside someone else's capture
        pair, side = self._side()
        self._calls += 1
        fn = self.original if side == "A" else self.candidate
        if pair < WARMUP_PAIRS:
            out = fn(args)
        elif self.cuda:
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            out = fn(args)
            e1.record()
            self._pending.append((pair, side, e0, e1))
        else:
            t0 = time.perf_counter()
            out = fn(args)
            self._times.setdefault(pair, {})[side] = (time.perf_counter() - t0) * 1000.0
        self._collect()
        return out

    def _collect(self) -> None:
        still = []
        for pair, side, e0, e1 in self._pending:
            if e1.query():
                self._times.setdefault(pair, {})[side] = e0.elapsed_time(e1)
            else:
                still.append((pair, side, e0, e1))
        self._pending = still
        complete = [p for p, t in self._times.items() if len(t) == 2]
        # Decide on the pairs already complete; the calls still in flight are dropped. Waiting
        # for them too would never end in a program that keeps the GPU queued (each call adds
        # events the GPU has not reached yet): seen on the H200, a graph still "checking" after
        # 400 training steps, alternating both sides for the whole run.
        if len(complete) >= self.pairs:
            self._finish(sorted(complete)[: self.pairs])

    def _finish(self, complete: list) -> None:
        from tilesmith import _core
        self.done = True
        base = [self._times[p]["A"] for p in complete]
        cand = [self._times[p]["B"] for p in complete]
        stats = _core.paired_stats(base, cand) if complete else None
        self._decide(stats)
