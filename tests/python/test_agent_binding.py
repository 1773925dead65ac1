"""_core.agent: the C++ agent loop driven by a Python workspace, against the mock server."""

import json
import threading
import time

import pytest

from tilesmith._core import agent
from tilesmith_testing import mock_server
from tilesmith_testing.workspace import ScriptedWorkspace

needs_mock = pytest.mark.skipif(mock_server.executable() is None,
                                reason="mock_openai_server is not built")

ORIGINAL = "def call(args):\n    x, = args\n    args.clear()\n    return (x, )\n"


def _env(url):
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": url, "TILESMITH_MODEL": "mock"}


def _tool(i, name, args):
    return {"id": f"c{i}", "name": name, "arguments": json.dumps(args)}


def Workspace(track_dir, evaluate=None):
    return ScriptedWorkspace(ORIGINAL, track_dir, evaluate,
                             profile_rows=[{"kernel": "k0", "original_ms": 1.0,
                                            "candidate_ms": None}])


def test_resolve_and_budget():
    ok, why = agent.resolve(None, {})
    assert not ok and "no model" in why
    ok, text = agent.resolve("gpt-x", {"OPENAI_API_KEY": "secret-key"})
    assert ok and "model=gpt-x" in text and "secret-key" not in text
    b = agent.Budget(2)
    assert (b.used, b.limit, b.spent) == (0, 2, False)
    assert agent.Budget(None).limit is None
    with pytest.raises(ValueError):
        agent.Budget(-1)
    with pytest.raises(ValueError, match="agency"):
        agent.run(Workspace("/tmp"), b, agency="extreme")
    with pytest.raises(ValueError, match="loops"):
        agent.run(Workspace("/tmp"), b, loops=0)


def test_no_route_is_a_failed_run_not_an_exception(tmp_path):
    res = agent.run(Workspace(tmp_path), agent.Budget(3), env={"HOME": str(tmp_path)})
    assert res["outcome"] == "failed" and "no model" in res["reason"]
    assert res["model_calls"] == 0


@needs_mock
def test_accepted_run_returns_the_workspace_report(tmp_path):
    candidate = ORIGINAL.replace("return (x, )", "return (x, )  # faster")
    script = [{"kind": "completion", "tool_calls": [_tool(1, "profile", {}),
                                                    _tool(2, "write_candidate",
                                                          {"content": candidate}),
                                                    _tool(3, "evaluate", {})]}]
    report = {"verdict": "accepted", "reason": "accepted: 1.5x", "speedup": 1.5,
              "correctness": [{"input_class": "normal", "passed": True, "detail": "ok"}],
              "timing": {"original_ms": 3.0, "candidate_ms": 2.0, "ratio_lower": 1.4,
                         "pairs": 10, "spread_pct": 1.0}, "confirmed": True}
    ws = Workspace(tmp_path, evaluate=lambda text: dict(report))
    budget = agent.Budget(5)
    with mock_server.MockServer(script, tmp_path) as url:
        res = agent.run(ws, budget, model="mock", env=_env(url))
    assert res["outcome"] == "accepted" and res["model_calls"] == 1 and budget.used == 1
    (acc,) = res["accepted"]
    assert acc["text"] == candidate and ws.written == [candidate]
    assert acc["report"] == report  # the complete Python report, not a C++ re-encoding


@needs_mock
def test_workspace_exceptions_become_tool_errors_and_the_gil_is_released(tmp_path):
    candidate = ORIGINAL.replace("return (x, )", "return (x, )  # v2")
    script = [
        {"kind": "hang", "delay_ms": 1500},  # the client waits, then retries
        {"kind": "completion", "tool_calls": [_tool(1, "write_candidate", {"content": candidate}),
                                              _tool(2, "evaluate", {}),
                                              _tool(3, "read_spec", {"name": "x"})]},
        {"kind": "completion", "content": "I give up."},
    ]

    def boom(text):
        raise RuntimeError("the gate exploded")

    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.05)

    t = threading.Thread(target=ticker)
    t.start()
    ws = Workspace(tmp_path, evaluate=boom)
    try:
        with mock_server.MockServer(script, tmp_path) as url:
            res = agent.run(ws, agent.Budget(3), model="mock", env=_env(url), traces=True)
    finally:
        stop.set()
        t.join()
    assert len(ticks) > 15  # Python ran while C++ waited on the network
    assert res["outcome"] in ("failed", "budget_spent") and res["accepted"] == []
    assert res["rejected_candidates"] >= 1
    traces = list((tmp_path / "traces").glob("*.jsonl"))
    assert traces, "traces=True writes a trace under the track"
    text = traces[0].read_text()
    assert "workspace.evaluate() raised RuntimeError: the gate exploded" in text
    assert "workspace.read_spec() raised KeyError: 'x'" in text
