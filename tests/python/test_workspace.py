"""The agent's workspace for one graph: later loops are gated against the earlier winner, the
time budget cuts each worker job's deadline, and the TileOPs manifest is served to the model."""

import time

import pytest

from tilesmith._workspace import TrackWorkspace


class _Track:
    dir = "/nonexistent-track"

    def write_attempt(self, text):
        pass


class _Progress:
    def update(self, *a):
        pass

    def event(self, *a):
        pass


class _Options:
    timeout_s = 300.0


class _Gate:
    """Accepts every candidate containing FAST; records baselines and job deadlines."""

    def __init__(self):
        self.options = _Options()
        self.baselines = []
        self.timeouts = []

    def rebase(self, source):
        self.baselines.append(source)

    def evaluate(self, source, label=""):
        self.timeouts.append(self.options.timeout_s)
        return {"verdict": "accepted" if "FAST" in source else "rejected", "reason": label}


def _workspace(gate, deadline=None):
    return TrackWorkspace(_Track(), gate, "# H\norig\n", "# H\n", "graph 1", _Progress(),
                          deadline=deadline)


def test_each_loop_is_gated_against_the_previous_winner():
    gate = _Gate()
    ws = _workspace(gate)
    assert ws.evaluate("slow\n")["verdict"] == "rejected"
    assert ws.evaluate("FAST 1\n")["verdict"] == "accepted"  # loop 1 ends
    assert gate.baselines == []
    ws.evaluate("FAST 2\n")  # loop 2: judged against loop 1's winner
    assert gate.baselines == ["# H\nFAST 1\n"]
    ws.evaluate("FAST 3\n")
    assert gate.baselines == ["# H\nFAST 1\n", "# H\nFAST 2\n"]


def test_the_time_budget_cuts_job_deadlines_and_then_refuses():
    gate = _Gate()
    ws = _workspace(gate, deadline=time.monotonic() + 5)
    ws.evaluate("slow\n")
    assert 0 < gate.timeouts[-1] <= 5 and gate.options.timeout_s == 300.0
    ws = _workspace(gate, deadline=time.monotonic() - 1)
    with pytest.raises(TimeoutError, match="time budget"):
        ws.evaluate("slow\n")


def test_specs_are_the_tileops_manifest():
    ws = _workspace(_Gate())
    names = ws.list_specs()
    assert "RMSNormFwdOp" in names and "GEMMFwdOp" in names
    text = ws.read_spec("RMSNormFwdOp")
    assert text.startswith("RMSNormFwdOp:") and "signature:" in text and "roofline:" in text
    with pytest.raises(KeyError, match="no TileOPs spec named 'Nope'"):
        ws.read_spec("Nope")


def test_each_judged_candidate_is_recorded_with_its_rewrite_kinds():
    from tilesmith._core import agent

    banners = agent.rewrite_banners()
    ws = _workspace(_Gate())
    ws.evaluate("slow\n")
    ws.evaluate(f"{banners['tileops']} (helper v1)\n{banners['cuda_graph']}\nFAST\n")
    assert [(t["rewrites"], t["verdict"]) for t in ws.tried] == [
        (("model",), "rejected"), (("cuda_graph", "tileops"), "accepted")]
