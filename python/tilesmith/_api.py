"""tilesmith.compile, tilesmith.diagnostics, tilesmith.benchmarks."""

from __future__ import annotations

import os
import weakref

import torch

from . import _eligibility, _insitu
from ._progress import PROGRESS
from ._session import Session, TilesmithBackend

AGENCIES = ("low", "medium", "high")

_sessions: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_sessions_by_id: dict = {}  # for compiled objects that cannot be weakly referenced


# The wall time one graph's optimization may take when neither max_optimization_s nor
# TILESMITH_TIME_BUDGET says otherwise.
DEFAULT_TIME_BUDGET_S = 600.0


def _seconds(value, name: str, env: str) -> float | None:
    """A positive number of seconds from the argument, else the environment, else None."""
    source = name
    if value is None:
        raw = os.environ.get(env, "").strip()
        if not raw:
            return None
        value, source = raw, f"{env}={raw!r}"
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"tilesmith.compile: {source} is not a number of seconds") from None
    if not (v > 0) or v == float("inf"):
        raise ValueError(f"tilesmith.compile: {source} must be a positive number of seconds")
    return v


def _patience(max_optimization_s, model_timeout_s, model_attempts) -> dict:
    """The time budget per graph and the model calls' patience, from the arguments or the
    environment (TILESMITH_TIME_BUDGET, TILESMITH_MODEL_TIMEOUT, TILESMITH_MODEL_ATTEMPTS)."""
    budget = _seconds(max_optimization_s, "max_optimization_s", "TILESMITH_TIME_BUDGET")
    timeout = _seconds(model_timeout_s, "model_timeout_s", "TILESMITH_MODEL_TIMEOUT")
    if model_attempts is None and os.environ.get("TILESMITH_MODEL_ATTEMPTS", "").strip():
        raw = os.environ["TILESMITH_MODEL_ATTEMPTS"].strip()
        try:
            model_attempts = int(raw)
        except ValueError:
            raise ValueError(f"tilesmith.compile: TILESMITH_MODEL_ATTEMPTS={raw!r} is not a "
                             "whole number") from None
    if model_attempts is not None and (isinstance(model_attempts, bool)
                                       or not isinstance(model_attempts, int) or model_attempts < 1):
        raise ValueError(f"tilesmith.compile: model_attempts must be an int >= 1, not "
                         f"{model_attempts!r}")
    return {"time_budget_s": budget or DEFAULT_TIME_BUDGET_S, "model_timeout_s": timeout,
            "model_attempts": model_attempts}


def _validate(example_inputs, agency, loops, max_model_calls, torch_compile_kwargs) -> None:
    if example_inputs is not None:
        if not isinstance(example_inputs, tuple):
            raise TypeError(
                f"tilesmith.compile: example_inputs must be a tuple of inputs such as (x,), not "
                f"{type(example_inputs).__name__}")
        tensors = [a for a in example_inputs if isinstance(a, torch.Tensor)]
        allowed = {"cuda", "cpu"} if _eligibility.cpu_admitted() else {"cuda"}
        if not any(t.device.type in allowed for t in tensors):
            seen = sorted({t.device.type for t in tensors}) or ["no tensors"]
            raise ValueError(
                "tilesmith.compile: example_inputs must hold at least one CUDA tensor (found "
                f"{', '.join(seen)}); CPU graphs are admitted only with TILESMITH_ALLOW_CPU=1")
    if not isinstance(agency, str) or agency not in AGENCIES:
        raise ValueError(f"tilesmith.compile: agency must be one of {', '.join(AGENCIES)}, "
                         f"not {agency!r}")
    if isinstance(loops, bool) or not isinstance(loops, int) or loops < 1:
        raise ValueError(f"tilesmith.compile: loops must be an int >= 1, not {loops!r}")
    if max_model_calls is not None and (isinstance(max_model_calls, bool)
                                        or not isinstance(max_model_calls, int)
                                        or max_model_calls < 1):
        raise ValueError(f"tilesmith.compile: max_model_calls must be None or an int >= 1, not "
                         f"{max_model_calls!r}")
    try:
        _insitu.pairs_from_env("cuda")
    except ValueError as e:
        raise ValueError(f"tilesmith.compile: {e}") from None
    if "backend" in torch_compile_kwargs:
        raise TypeError("tilesmith.compile: `backend` cannot be given; Tilesmith is the backend "
                        "(use torch.compile directly for another one)")


def _register(compiled, session: Session) -> None:
    try:
        _sessions[compiled] = session
    except TypeError:
        _sessions_by_id[id(compiled)] = (compiled, session)


def _session_of(compiled) -> Session | None:
    try:
        s = _sessions.get(compiled)
    except TypeError:
        s = None
    if s is None and id(compiled) in _sessions_by_id:
        s = _sessions_by_id[id(compiled)][1]
    return s


def _new_run_id() -> str:
    from tilesmith import _core
    return _core.new_run_id()


def _fallback_reason(agent_model) -> str | None:
    """Why this call cannot optimize (then it is plain torch.compile), or None."""
    try:
        from tilesmith import _core
        from tilesmith._core import agent
    except Exception as e:
        return f"the Tilesmith core is unavailable ({type(e).__name__}: {e})"
    model = agent_model if agent_model is not None else os.environ.get("TILESMITH_MODEL")
    if not model:
        return "no model named (agent_model= or TILESMITH_MODEL)"
    ok, text = agent.resolve(agent_model, None)
    if not ok:
        return f"no route to model {model!r}: {text}"
    try:
        _core.cache_root()
    except Exception as e:
        return f"no cache directory ({e})"
    return None


def compile(model, example_inputs=None, agent_model=None, agency="medium", loops=1,
            max_model_calls=None, max_optimization_s=None, model_timeout_s=None,
            model_attempts=None, **torch_compile_kwargs):
    """torch.compile with Tilesmith as the backend.

    Returns an ordinary torch.compile callable (`mode`, `options`, `fullgraph`, `dynamic` pass
    through). Each eligible Inductor graph is optimized at its first real call; a confirmed faster
    wrapper replaces it. Without `example_inputs`, without a model (`agent_model` or
    TILESMITH_MODEL), or without a route to it, this is plain `torch.compile(...)` and
    `benchmarks()` is empty.

    max_optimization_s (TILESMITH_TIME_BUDGET; default 600) bounds the wall time spent on one
    graph: when it runs out, the best confirmed candidate so far is installed or the graph stays
    on Inductor. model_timeout_s (TILESMITH_MODEL_TIMEOUT) is how long a model call may wait for
    its first byte or in silence, and the longest Retry-After honoured; model_attempts
    (TILESMITH_MODEL_ATTEMPTS) how often a failing call is tried. Ctrl-C during an optimization
    stops it at once; the graph stays on Inductor and KeyboardInterrupt reaches the program.
    """
    _validate(example_inputs, agency, loops, max_model_calls, torch_compile_kwargs)
    patience = _patience(max_optimization_s, model_timeout_s, model_attempts)
    if example_inputs is None:
        reason = "no example_inputs given"
    else:
        reason = _fallback_reason(agent_model)
    if reason is not None:
        compiled = torch.compile(model, **torch_compile_kwargs)
        session = Session(run_id=None, root=None, agent_model=agent_model, agency=agency,
                          loops=loops, max_model_calls=max_model_calls,
                          dynamic=torch_compile_kwargs.get("dynamic"), fallback_reason=reason)
        _register(compiled, session)
        PROGRESS.event("compile", f"plain torch.compile: {reason}")
        return compiled

    from tilesmith import _core
    session = Session(run_id=_new_run_id(), root=_core.cache_root(), agent_model=agent_model,
                      agency=agency, loops=loops, max_model_calls=max_model_calls,
                      dynamic=torch_compile_kwargs.get("dynamic"), patience=patience)
    compiled = torch.compile(model, backend=TilesmithBackend(session), **torch_compile_kwargs)
    _register(compiled, session)
    return compiled


def diagnostics(compiled) -> tuple:
    """Every graph seen under this tilesmith.compile call: kind, eligible or not, why, status."""
    s = _session_of(compiled)
    if s is None:
        raise TypeError("tilesmith.diagnostics: not a callable returned by tilesmith.compile")
    return tuple(g.diagnostic() for g in s.graphs)


def benchmarks(compiled) -> tuple:
    """One record per installed graph (torch_inductor_ms, tilesmith_ms, speedup, kind,
    cache_key); empty before the first call or when nothing was installed."""
    s = _session_of(compiled)
    if s is None:
        raise TypeError("tilesmith.benchmarks: not a callable returned by tilesmith.compile")
    return tuple(sorted(s.benchmarks, key=lambda b: b.graph))


def run_info(compiled) -> dict:
    """The run ID, the cache root, why it fell back to plain torch.compile (or None), and the
    agent runs' outcomes."""
    s = _session_of(compiled)
    if s is None:
        raise TypeError("tilesmith.run_info: not a callable returned by tilesmith.compile")
    return {"run_id": s.run_id, "root": s.root, "fallback_reason": s.fallback_reason,
            "agent_runs": list(s.agent_runs),
            "model_calls": s.budget.used if s.budget is not None else 0}
