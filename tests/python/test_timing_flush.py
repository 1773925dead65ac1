"""tileops.timing on the CPU: the evict_last flush kernel under Triton's interpreter reads every
element; time_alternating's call order under fake CUDA events, its synchronized and CPU forms;
paired_ratio against the C++ estimator."""

import math
import os
import subprocess
import sys

import pytest

SCRIPT = """
import torch
from tileops import timing
buf = torch.arange(3 * timing.FLUSH_BLOCK + 5, dtype=torch.float32)
partial = timing.flush_l2(buf)
assert partial.shape == (4,), partial.shape
assert torch.equal(partial.double().sum(), buf.double().sum()), (partial, buf.sum())
print("ok")
"""


def test_the_evict_last_flush_reads_every_element_once():
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"


def _fake_cuda(monkeypatch, clock, log):
    """CUDA events, sync and sleep replaced: events read `clock`, sync and sleep go to `log`."""
    import torch

    class FakeEvent:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = clock[0]

        def elapsed_time(self, end):  # ms, as CUDA events report
            return end.t - self.t

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: log.append("sync"))
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: log.append("sleep"))


def test_alternating_timing_rotates_the_order_and_keeps_each_fns_times_apart(monkeypatch):
    # CUDA events, sync and sleep replaced by a clock that each call of fn k advances by k + 1
    # units: fn k's times are all k + 1 whatever the order, and the log shows the rotation.
    from tileops import timing

    clock, log = [0.0], []
    _fake_cuda(monkeypatch, clock, [])

    def fn(k):
        def call():
            log.append(k)
            clock[0] += k + 1
        return call

    flushes = []
    per_fn = timing.time_alternating([fn(0), fn(1), fn(2)], 4, lambda: flushes.append(1),
                                     warmup=1)
    assert per_fn == [[1e3] * 4, [2e3] * 4, [3e3] * 4]  # microseconds
    assert log[:3] == [0, 1, 2]  # warm-up, then cycles starting at fn r % 3
    assert log[3:] == [0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2]
    assert len(flushes) == 1 + 12  # the warm-up flush, then one before every timed call
    assert timing.time_runs(fn(1), 3, lambda: None, warmup=0) == [2e3] * 3


def test_synchronized_timing_syncs_before_each_run_and_can_skip_the_flush(monkeypatch):
    # host_lead_cycles=None (tilesmith bench): no device sleep, a sync ahead of every start
    # event, so the host's launch cost is inside the interval; flush=None flushes nothing.
    from tileops import timing

    clock, log = [0.0], []
    _fake_cuda(monkeypatch, clock, log)

    def fn(k):
        def call():
            log.append(k)
            clock[0] += k + 1
        return call

    per_fn = timing.time_alternating([fn(0), fn(1)], 3, None, warmup=1, host_lead_cycles=None)
    assert per_fn == [[1e3] * 3, [2e3] * 3]
    assert "sleep" not in log
    assert log == [0, 1, "sync"] + ["sync", 0, "sync", 1, "sync", 1, "sync", 0,
                                    "sync", 0, "sync", 1] + ["sync"]


def test_cpu_timing_uses_the_host_clock_in_the_same_order(monkeypatch):
    import torch

    from tileops import timing

    def no_cuda(*a, **k):
        raise AssertionError("CUDA used for a CPU measurement")

    monkeypatch.setattr(torch.cuda, "synchronize", no_cuda)
    monkeypatch.setattr(torch.cuda, "Event", no_cuda)
    now, log = [0.0], []
    monkeypatch.setattr(timing.time, "perf_counter", lambda: now[0])

    def fn(k):
        def call():
            log.append(k)
            now[0] += (k + 1) * 1e-6  # seconds
        return call

    per_fn = timing.time_alternating([fn(0), fn(1), fn(2)], 2, None, warmup=0,
                                     device=torch.device("cpu"))
    assert [[round(t, 6) for t in us] for us in per_fn] == [[1.0] * 2, [2.0] * 2, [3.0] * 2]
    assert log == [0, 1, 2, 1, 2, 0]


def _binomial_ci_index(n, confidence=0.95):
    """The largest k with 1 - 2 P(Binomial(n, 1/2) <= k - 1) >= confidence (0: none)."""
    k, cdf = 0, 0.0
    for cand in range(1, (n + 1) // 2 + 1):
        cdf += math.comb(n, cand - 1) / 2 ** n
        if 1 - 2 * cdf >= confidence - 1e-12:
            k = cand
        else:
            break
    return k


def test_paired_ratio_is_the_cpp_estimator_in_the_faster_is_above_one_orientation():
    from tileops import _core, timing

    # Odd n: the ratio is the middle cycle's base / us; `us` faster in most cycles reads > 1.
    base = [8.0, 9.0, 30.0, 12.0, 5.0]
    us = [4.0, 9.0, 10.0, 16.0, 1.0]  # per cycle 2, 1, 3, 0.75, 5
    r = timing.paired_ratio(base, us)
    assert r["ratio"] == pytest.approx(2.0, rel=1e-12)
    assert r["pairs"] == 5
    # Five pairs cannot reach 95%: the interval is then [min, max] with its lower coverage.
    assert r["ratio_lower"] == pytest.approx(0.75, rel=1e-12)
    assert r["ratio_upper"] == pytest.approx(5.0, rel=1e-12)
    assert r["confidence"] == pytest.approx(1 - 2 / 2 ** 5)
    # The gate reads the same pairs as candidate / baseline (< 1: faster): every figure is the
    # reciprocal, the bounds and percentiles swapped.
    gate = _core.paired_stats(base, us)
    assert r["ratio"] == pytest.approx(1 / gate.ratio, rel=1e-12)
    assert r["ratio_p10"] == pytest.approx(1 / gate.ratio_p90, rel=1e-12)
    assert r["ratio_p90"] == pytest.approx(1 / gate.ratio_p10, rel=1e-12)
    assert r["ratio_lower"] == pytest.approx(1 / gate.ratio_upper, rel=1e-12)
    assert r["ratio_upper"] == pytest.approx(1 / gate.ratio_lower, rel=1e-12)
    assert r["ratio_p10"] < r["ratio"] < r["ratio_p90"]


def test_paired_ratio_interval_and_even_median_come_from_order_statistics_of_log_ratios():
    from tileops import timing

    # 25 cycles, ratios 0.80, 0.82, ... in a scrambled order: the interval is the k-th smallest
    # and k-th largest ratio, k from the binomial distribution (8 for 25 pairs at 95%).
    ratios = [0.8 + 0.02 * ((7 * i) % 25) for i in range(25)]
    us = [10.0 + i for i in range(25)]
    base = [t * q for t, q in zip(us, ratios)]
    r = timing.paired_ratio(base, us)
    k = _binomial_ci_index(25)
    assert k == 8
    ordered = sorted(ratios)
    assert r["ratio"] == pytest.approx(ordered[12], rel=1e-12)
    assert r["ratio_lower"] == pytest.approx(ordered[k - 1], rel=1e-12)
    assert r["ratio_upper"] == pytest.approx(ordered[25 - k], rel=1e-12)
    assert r["confidence"] >= 0.95
    # Even n: the geometric mean of the two middle ratios (medians of log ratios), not their
    # arithmetic mean.
    r = timing.paired_ratio([1.0, 4.0, 9.0, 1.0], [1.0, 1.0, 1.0, 1.0])
    assert r["ratio"] == pytest.approx(math.sqrt(1.0 * 4.0), rel=1e-12)
    with pytest.raises(ValueError, match="finite positive"):
        timing.paired_ratio([1.0, 2.0], [1.0, 0.0])
