"""The in-place check of an installed candidate (tilesmith._insitu), with host-timed callables."""

import time

import pytest

from tilesmith import _insitu


def _sleeper(ms, calls):
    def fn(args):
        calls.append(ms)
        time.sleep(ms / 1000.0)
        return (args[0] + 1,)
    return fn


def _drive(original_ms, candidate_ms, pairs=6):
    calls, verdicts = [], []
    check = _insitu.InPlaceCheck(_sleeper(original_ms, calls), _sleeper(candidate_ms, calls),
                                 "cpu", pairs, verdicts.append)
    n = 2 * (pairs + _insitu.WARMUP_PAIRS)
    outs = [check([i]) for i in range(n)]
    return check, calls, verdicts, outs


def test_alternates_abba_and_decides_once_after_its_pairs():
    check, calls, verdicts, outs = _drive(1.0, 6.0)
    assert outs == [(i + 1,) for i in range(len(outs))]  # every call ran one side, once
    sides = ["A" if ms == 1.0 else "B" for ms in calls]
    assert "".join(sides[:8]) == "ABBABAAB"  # ABBA BAAB: neither side always goes first
    assert len(verdicts) == 1 and check.done
    stats = verdicts[0]
    assert stats.n == 6 and stats.ratio > 1.0  # the candidate is slower here: roll it back


def test_a_faster_candidate_is_kept_and_later_calls_go_to_it():
    check, calls, verdicts, _ = _drive(6.0, 1.0)
    assert verdicts[0].ratio < 1.0
    calls.clear()
    check([0])
    assert calls == [1.0]


def test_abandon_routes_every_later_call_to_the_replacement():
    calls, verdicts = [], []
    check = _insitu.InPlaceCheck(_sleeper(1.0, calls), _sleeper(2.0, calls), "cpu", 4,
                                 verdicts.append)
    check([0])
    check.abandon(_sleeper(3.0, calls))
    calls.clear()
    for i in range(20):
        check([i])
    assert calls == [3.0] * 20 and verdicts == []


@pytest.mark.parametrize("raw,want", [("", None), ("0", 0), ("7", 7)])
def test_pairs_from_env(monkeypatch, raw, want):
    monkeypatch.setenv("TILESMITH_INSITU_PAIRS", raw)
    if want is None:
        assert _insitu.pairs_from_env("cuda") == _insitu.DEFAULT_PAIRS
        assert _insitu.pairs_from_env("cpu") == 0
    else:
        assert _insitu.pairs_from_env("cuda") == want == _insitu.pairs_from_env("cpu")


@pytest.mark.parametrize("raw", ["many", "-2", "1.5"])
def test_pairs_from_env_rejects_bad_values(monkeypatch, raw):
    monkeypatch.setenv("TILESMITH_INSITU_PAIRS", raw)
    with pytest.raises(ValueError, match="TILESMITH_INSITU_PAIRS"):
        _insitu.pairs_from_env("cuda")


class _LaggingEvent:
    """A CUDA event stand-in for a GPU that runs `LAG` events behind the host: query() is true
    only once LAG later events were recorded, as when the host keeps the queue full."""
    LAG = 4
    recorded: list = []

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = time.perf_counter()
        self.recorded.append(self)

    def query(self):
        return len(self.recorded) - self.recorded.index(self) > self.LAG

    def elapsed_time(self, end):
        return (end.t - self.t) * 1000.0


def test_decides_while_the_gpu_stays_behind_the_host(monkeypatch):
    monkeypatch.setattr(_insitu.torch.cuda, "Event", _LaggingEvent)
    monkeypatch.setattr(_insitu.torch.cuda, "is_current_stream_capturing", lambda: False)
    _LaggingEvent.recorded = []
    calls, verdicts = [], []
    check = _insitu.InPlaceCheck(_sleeper(1.0, calls), _sleeper(4.0, calls), "cpu", 6,
                                 verdicts.append)
    check.cuda = True  # time with the (lagging) events, as on a GPU
    for i in range(2 * (6 + _insitu.WARMUP_PAIRS) + 8):
        check([i])
        if check.done:
            break
    # Events are always in flight here; the check still decides, on the pairs complete so far.
    assert check.done and len(verdicts) == 1
    assert verdicts[0].n == 6 and verdicts[0].ratio > 1.0
