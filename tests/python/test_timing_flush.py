"""tileops.timing on the CPU: the evict_last flush kernel under Triton's interpreter reads every
element; time_alternating's call order under fake CUDA events."""

import os
import subprocess
import sys

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


def test_alternating_timing_rotates_the_order_and_keeps_each_fns_times_apart(monkeypatch):
    # CUDA events, sync and sleep replaced by a clock that each call of fn k advances by k + 1
    # units: fn k's times are all k + 1 whatever the order, and the log shows the rotation.
    import torch

    from tileops import timing

    clock = [0.0]

    class FakeEvent:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = clock[0]

        def elapsed_time(self, end):  # ms, as CUDA events report
            return end.t - self.t

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "_sleep", lambda cycles: None)
    log = []

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
