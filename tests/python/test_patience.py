"""How long Tilesmith may hold the user's first call: the time budget per graph, the model calls'
timeouts and attempts (arguments and environment), and Ctrl-C stopping an optimization at once.
A model server that never answers (the mock's "hang") is the worst case for each."""

import contextlib
import signal
import sys
import threading
import time

import pytest
import torch

import tilesmith
from tilesmith_testing import fake_gate, mock_server
from tilesmith_testing.models import Small

needs_mock = pytest.mark.skipif(mock_server.executable() is None,
                                reason="mock_openai_server is not built")
SILENT = [{"kind": "hang", "delay_ms": 120_000}] * 4


@pytest.fixture
def user(monkeypatch, tmp_path):
    import os

    for k in list(os.environ):
        if k.startswith(("OPENAI_", "OPENROUTER_", "TILESMITH_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path / "ts"))
    monkeypatch.setenv("TILESMITH_ALLOW_CPU", "1")
    monkeypatch.setenv("TILESMITH_MODEL", "m")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setitem(sys.modules, "tilesmith.gate", fake_gate)  # in-process: fast to start
    torch.manual_seed(0)
    return monkeypatch


def _small_and_eager():
    model, x = Small().eval(), torch.randn(4, 8)
    with torch.no_grad():
        return model, x, model(x)


@contextlib.contextmanager
def _compiled_against_a_silent_server(user, tmp_path, model, x, **kwargs):
    """tilesmith.compile(model) routed to a model server that never answers, while it runs."""
    with mock_server.MockServer(SILENT, tmp_path) as url:
        user.setenv("OPENAI_BASE_URL", url)
        yield tilesmith.compile(model, example_inputs=(x,), **kwargs)


def _first_call(m, x):
    """Compiles (not timed: Inductor's own work) then times the first real call."""
    t0 = time.monotonic()
    with torch.no_grad():
        y = m(x)
    return y, time.monotonic() - t0


@needs_mock
def test_a_silent_model_server_is_bounded_by_the_time_budget(user, tmp_path):
    model, x, eager = _small_and_eager()
    with _compiled_against_a_silent_server(user, tmp_path, model, x, max_optimization_s=3) as m:
        y, wall = _first_call(m, x)
    assert torch.allclose(y, eager, atol=1e-6)
    assert wall < 3 + 30, wall  # the budget plus Inductor's own compile of the graph
    (d,) = tilesmith.diagnostics(m)
    assert d.status == ("kept Inductor: no candidate accepted: stopped: the time budget is spent "
                        "(max_optimization_s=3)"), d.status


@needs_mock
def test_model_timeouts_and_attempts_from_the_environment(user, tmp_path):
    model, x = Small().eval(), torch.randn(4, 8)
    user.setenv("TILESMITH_MODEL_TIMEOUT", "0.5")
    user.setenv("TILESMITH_MODEL_ATTEMPTS", "2")
    with _compiled_against_a_silent_server(user, tmp_path, model, x) as m:
        _first_call(m, x)
    (d,) = tilesmith.diagnostics(m)
    assert "no response within 500 ms" in d.status and "failed after" in d.status, d.status


@needs_mock
def test_ctrl_c_stops_the_optimization_at_once_and_the_graph_stays_on_inductor(user, tmp_path):
    model, x, eager = _small_and_eager()
    with _compiled_against_a_silent_server(user, tmp_path, model, x, max_optimization_s=300) as m:
        sent = []

        def press_ctrl_c():  # once the optimization has begun and its model call is in flight
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not any(
                    d.cache_key for d in tilesmith.diagnostics(m)):
                time.sleep(0.05)
            time.sleep(1.0)
            sent.append(time.monotonic())
            signal.raise_signal(signal.SIGINT)

        threading.Thread(target=press_ctrl_c, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            with torch.no_grad():
                m(x)
        assert sent and time.monotonic() - sent[0] < 2.0
        (d,) = tilesmith.diagnostics(m)
        assert d.status == "kept Inductor: interrupted (Ctrl-C) while optimizing"
        with torch.no_grad():
            assert torch.allclose(m(x), eager, atol=1e-6)  # Inductor's code, no new optimization


@pytest.mark.parametrize("kwargs,env,message", [
    ({"max_optimization_s": 0}, {}, "max_optimization_s must be a positive number"),
    ({"model_timeout_s": "soon"}, {}, "model_timeout_s is not a number"),
    ({"model_attempts": 0}, {}, "model_attempts must be an int >= 1"),
    ({}, {"TILESMITH_TIME_BUDGET": "ten"}, "TILESMITH_TIME_BUDGET='ten' is not a number"),
    ({}, {"TILESMITH_MODEL_ATTEMPTS": "2.5"}, "TILESMITH_MODEL_ATTEMPTS='2.5' is not a whole"),
])
def test_bad_patience_settings_are_clear_errors(user, kwargs, env, message):
    for k, v in env.items():
        user.setenv(k, v)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tilesmith.compile(Small(), example_inputs=(torch.randn(4, 8),), **kwargs)
