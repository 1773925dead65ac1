"""Tilesmith on torch.compile, on CPU Inductor graphs (admitted with TILESMITH_ALLOW_CPU=1).

The heavy scenarios run in fresh processes (tilesmith_testing/driver.py) against the mock OpenAI
server, with a test double of the gate (tilesmith_testing/fake_gate.py) standing in for
`tilesmith.gate`. They share one TORCHINDUCTOR_CACHE_DIR so C++ kernels compile once.
"""

import io
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import torch

from tilesmith import _core
import tilesmith
from tilesmith import _identity, cli
from tilesmith_testing import mock_server, scripts
from tilesmith_testing import RESULT_MARK
from tilesmith_testing.models import Small

TESTS = pathlib.Path(__file__).resolve().parent
HEX64 = re.compile(r"^[0-9a-f]{64}$")

needs_mock = pytest.mark.skipif(mock_server.executable() is None,
                                reason="mock_openai_server is not built")


@pytest.fixture(scope="session")
def inductor_cache(tmp_path_factory):
    return str(os.environ.get("TILESMITH_TEST_INDUCTOR_CACHE")
               or tmp_path_factory.mktemp("inductor"))


def _python_path() -> str:
    core = os.path.dirname(_core.__file__)
    package = os.path.dirname(os.path.dirname(tilesmith.__file__))
    parts = [str(TESTS), package, core, os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)


def _start_driver(scenario, *, base_url, cache_dir, inductor_cache, gate_log, extra_env=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "OPENROUTER_", "TILESMITH_"))}
    env.update({"PYTHONPATH": _python_path(), "TILESMITH_CACHE_DIR": str(cache_dir),
                "TORCHINDUCTOR_CACHE_DIR": inductor_cache, "TILESMITH_ALLOW_CPU": "1",
                "TILESMITH_MODEL": "mock-model", "OPENAI_API_KEY": "test-key",
                "OPENAI_BASE_URL": base_url, "TILESMITH_FAKE_GATE_LOG": str(gate_log)})
    env.update(extra_env or {})
    return subprocess.Popen([sys.executable, "-m", "tilesmith_testing.driver", scenario], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish_driver(proc):
    stdout, stderr = proc.communicate(timeout=900)
    lines = [l for l in stdout.splitlines() if l.startswith(RESULT_MARK)]
    assert proc.returncode == 0 and lines, f"driver failed:\n{stdout}\n{stderr}"
    return json.loads(lines[-1][len(RESULT_MARK):]), stderr


def _run_driver(scenario, **kw):
    return _finish_driver(_start_driver(scenario, **kw))


def _gate_events(path):
    return [json.loads(l) for l in pathlib.Path(path).read_text().splitlines()]


@needs_mock
def test_installed_candidate_is_checked_in_place_then_kept_or_rolled_back(tmp_path, inductor_cache):
    # On the CPU two equivalent wrappers time alike, so either verdict may come; what must hold:
    # the check runs over the next calls, decides once, says so, and every output stays right.
    with mock_server.MockServer(scripts.accept_each(1), tmp_path) as url:
        r, stderr = _run_driver("infer_in_place", base_url=url, cache_dir=tmp_path / "ts",
                                inductor_cache=inductor_cache, gate_log=tmp_path / "gate.jsonl",
                                extra_env={"TILESMITH_INSITU_PAIRS": "3"})
    assert r["status_after_install"] == "installed; checking in place over its next 10 calls"
    assert max(r["errs"]) < 1e-5
    (graph,) = r["diagnostics"]
    kept = graph["status"].startswith("installed; in place ")
    assert kept or graph["status"].startswith("rolled back: slower in place"), graph["status"]
    assert "over 3 paired calls" in graph["status"] and graph["status"] in stderr
    if kept:
        (bench,) = r["benchmarks"]
        assert bench["in_place_speedup"] > 1.0
    else:
        assert r["benchmarks"] == [] and r["candidate_calls"] == [None]


@needs_mock
def test_cpu_pipeline_end_to_end_then_artifact_cache_hit(tmp_path, inductor_cache):
    cache = tmp_path / "tilesmith"
    gate_log = tmp_path / "gate.jsonl"

    # Process A: capture, agent (a wrong candidate, then a right one), gate, install.
    with mock_server.MockServer(scripts.reject_then_accept(), tmp_path) as url:
        a, stderr = _run_driver("infer", base_url=url, cache_dir=cache,
                                inductor_cache=inductor_cache, gate_log=gate_log)
    (graph,) = a["diagnostics"]
    assert graph["kind"] == "inference" and graph["eligible"] and graph["status"] == "installed"
    assert HEX64.match(graph["cache_key"])
    (bench,) = a["benchmarks"]
    assert bench["kind"] == "inference" and bench["cache_key"] == graph["cache_key"]
    assert bench["torch_inductor_ms"] > 0 and bench["tilesmith_ms"] > 0 and bench["speedup"] > 0
    assert bench["source"] == "agent"
    assert a["first_err"] == 0.0 and a["second_err"] < 1e-5
    assert a["candidate_calls"] == [1]  # the second call ran the installed candidate
    assert a["run_info"]["model_calls"] == 3
    assert "candidate 1: rejected: incorrect" in stderr and "installed" in stderr

    track = pathlib.Path(graph["track_dir"])
    assert track == cache / "runs" / a["run_info"]["run_id"] / graph["cache_key"]
    attempts = sorted((track / "attempts").iterdir())
    assert [p.name for p in attempts] == ["attempt_00.py", "attempt_01.py", "attempt_02.py"]
    texts = [p.read_text() for p in attempts]
    for t in texts:
        assert t.startswith(_identity.HEADER_START)
        header, wrapper = t.split(_identity.HEADER_END + "\n", 1)
        assert all(l.startswith("#") for l in header.splitlines())
        assert "def call(" in wrapper and "# kernel path:" not in wrapper
        assert inductor_cache not in t
    assert "torch.ops.aten.addmm" in texts[0]  # the FX program is in the header
    assert "_ts_broken" in texts[1] and "_ts_counted" in texts[2]
    reports = [json.loads(p.read_text()) for p in sorted((track / "profiles").iterdir())]
    assert [r["verdict"] for r in reports] == ["rejected", "accepted"]
    assert not (track / "cache.json").exists()

    events = _gate_events(gate_log)
    assert events[0]["event"] == "init" and events[0]["device"] == "cpu"
    assert a["user_x_ptr"] not in events[0]["arg_ptrs"]  # the gate got copies only
    artifact = _core.ArtifactCache(str(cache)).lookup(graph["cache_key"])
    assert artifact is not None

    # Process B: same graph, new run: an exact artifact-cache hit; the agent is not run (the
    # script is empty, so any model call would fail) and the re-checked candidate is installed.
    gate_log.unlink()
    with mock_server.MockServer([], tmp_path) as url:
        b, _ = _run_driver("infer", base_url=url, cache_dir=cache,
                           inductor_cache=inductor_cache, gate_log=gate_log)
    assert b["run_info"]["run_id"] != a["run_info"]["run_id"]
    assert b["run_info"]["model_calls"] == 0 and b["run_info"]["agent_runs"] == []
    (graph_b,) = b["diagnostics"]
    assert graph_b["cache_key"] == graph["cache_key"]
    assert graph_b["status"] == "installed from the artifact cache"
    assert b["benchmarks"][0]["source"] == "artifact_cache"
    assert b["second_err"] < 1e-5 and b["candidate_calls"] == [1]
    hit = json.loads((pathlib.Path(graph_b["track_dir"]) / "cache.json").read_text())
    assert hit["artifact"] == artifact and hit["installed"] is True
    assert hit["accepted_in_run"] == a["run_info"]["run_id"]
    assert [e["event"] for e in _gate_events(gate_log)] == ["init", "check"]

    # The command line over these two runs.
    os.environ["TILESMITH_CACHE_DIR"] = str(cache)
    try:
        out = io.StringIO()
        assert cli.main(["runs"], out=out) == 0
        assert a["run_info"]["run_id"] in out.getvalue() and b["run_info"]["run_id"] in out.getvalue()
        out = io.StringIO()
        assert cli.main(["show", a["run_info"]["run_id"]], out=out) == 0
        assert "inference" in out.getvalue() and "rejected, accepted" in out.getvalue()
        out = io.StringIO()
        assert cli.main(["show", b["run_info"]["run_id"], graph["cache_key"][:10]], out=out) == 0
        assert "artifact-cache hit" in out.getvalue() and "attempt_00.py" in out.getvalue()
        assert cli.main(["show", "no-such-run"], out=io.StringIO()) == 1
        out = io.StringIO()
        assert cli.main(["clean"], out=out) == 0 and "removed 2 run(s)" in out.getvalue()
        assert _core.list_runs(str(cache)) == []
    finally:
        del os.environ["TILESMITH_CACHE_DIR"]


@needs_mock
def test_training_step_with_graph_break_gets_a_track_per_graph(tmp_path, inductor_cache):
    with mock_server.MockServer(scripts.accept_each(4), tmp_path) as url:
        r, _ = _run_driver("train", base_url=url, cache_dir=tmp_path / "ts",
                           inductor_cache=inductor_cache, gate_log=tmp_path / "gate.jsonl")
    kinds = sorted((d["dynamo_graph"], d["kind"]) for d in r["diagnostics"])
    assert kinds == [(1, "backward"), (1, "forward"), (2, "backward"), (2, "forward")]
    assert all(d["eligible"] and d["status"] == "installed" for d in r["diagnostics"])
    keys = {d["cache_key"] for d in r["diagnostics"]}
    tracks = {d["track_dir"] for d in r["diagnostics"]}
    assert len(keys) == 4 and len(tracks) == 4 and all(HEX64.match(k) for k in keys)
    assert {b["kind"] for b in r["benchmarks"]} == {"forward", "backward"}
    assert len(r["benchmarks"]) == 4
    assert max(r["loss_err"]) < 1e-5 and max(r["grad_err"]) < 1e-5
    assert r["candidate_calls"] == [1, 1, 1, 1]  # step 2 ran every installed candidate once
    for t in tracks:
        assert (pathlib.Path(t) / "attempts" / "attempt_01.py").exists()


# ---- fallbacks and validation (in this process) --------------------------------------------------

def _backend_of(compiled):
    b = compiled.dynamo_ctx.callback
    while hasattr(b, "_torchdynamo_orig_backend"):
        b = b._torchdynamo_orig_backend
    return b


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for k in list(os.environ):
        if k.startswith(("OPENAI_", "OPENROUTER_", "TILESMITH_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))  # no cliproxyapi login there
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path / "ts"))
    return monkeypatch


@pytest.mark.parametrize("case", ["no example_inputs", "no model", "no route"])
def test_fallbacks_are_plain_torch_compile_with_empty_benchmarks(clean_env, case):
    torch.manual_seed(0)
    model, x = Small(), torch.randn(4, 8)
    kwargs = {"example_inputs": (x,)}
    clean_env.setenv("TILESMITH_ALLOW_CPU", "1")
    if case == "no example_inputs":
        kwargs = {}
        clean_env.setenv("TILESMITH_MODEL", "some-model")
        clean_env.setenv("OPENAI_API_KEY", "test-key")
    elif case == "no route":
        clean_env.setenv("TILESMITH_MODEL", "some-model")
    m = tilesmith.compile(model, **kwargs)
    assert isinstance(_backend_of(m), torch._TorchCompileInductorWrapper)
    assert tilesmith.benchmarks(m) == ()
    reason = tilesmith.run_info(m)["fallback_reason"]
    assert {"no example_inputs": "no example_inputs", "no model": "no model named",
            "no route": "no route to model"}[case] in reason
    if case == "no route":  # one real compile is enough to show it runs as plain Inductor
        with torch.no_grad():
            assert torch.allclose(m(x), model(x))
        assert tilesmith.benchmarks(m) == () and tilesmith.diagnostics(m) == ()


def test_tilesmith_is_the_backend_and_mode_options_pass_through(clean_env):
    clean_env.setenv("TILESMITH_ALLOW_CPU", "1")
    clean_env.setenv("TILESMITH_MODEL", "m")
    clean_env.setenv("OPENAI_API_KEY", "test-key")
    m = tilesmith.compile(Small(), example_inputs=(torch.randn(4, 8),), mode="reduce-overhead",
                          fullgraph=True)
    wrapper = _backend_of(m)
    assert isinstance(wrapper, torch._TorchCompileWrapper)
    assert wrapper.kwargs == {"mode": "reduce-overhead"}
    assert type(wrapper.compiler_fn).__name__ == "TilesmithBackend"
    assert tilesmith.run_info(m)["fallback_reason"] is None


def test_validation_errors(clean_env):
    model, x = Small(), torch.randn(2, 8)
    with pytest.raises(TypeError, match="example_inputs must be a tuple"):
        tilesmith.compile(model, example_inputs=[x])
    with pytest.raises(ValueError, match="at least one CUDA tensor"):
        tilesmith.compile(model, example_inputs=(x,))  # CPU, not admitted
    with pytest.raises(ValueError, match="at least one CUDA tensor"):
        tilesmith.compile(model, example_inputs=(1, 2))
    clean_env.setenv("TILESMITH_ALLOW_CPU", "1")
    for bad in ("max", "", None, 3):
        with pytest.raises(ValueError, match="agency"):
            tilesmith.compile(model, example_inputs=(x,), agency=bad)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="loops"):
            tilesmith.compile(model, example_inputs=(x,), loops=bad)
    for bad in (0, -3, 2.0, False, "5"):
        with pytest.raises(ValueError, match="max_model_calls"):
            tilesmith.compile(model, example_inputs=(x,), max_model_calls=bad)
    with pytest.raises(TypeError, match="backend"):
        tilesmith.compile(model, example_inputs=(x,), backend="eager")
    with pytest.raises(TypeError, match="not a callable returned by tilesmith.compile"):
        tilesmith.benchmarks(model)


def test_ineligible_graphs_report_their_reasons(clean_env):
    """Dynamic shapes, input mutation and a CPU graph (not admitted) stay on Inductor; the agent
    is never asked (the route points at a closed port, so a call would fail slowly)."""
    clean_env.setenv("TILESMITH_ALLOW_CPU", "1")
    clean_env.setenv("TILESMITH_MODEL", "m")
    clean_env.setenv("OPENAI_API_KEY", "test-key")
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    x = torch.randn(4, 8)

    def mutate(t):
        t.add_(1)
        return t * 2

    m = tilesmith.compile(mutate, example_inputs=(x,))
    y = x.clone()
    with torch.no_grad():
        out = m(y)
    assert torch.allclose(out, (x + 1) * 2) and torch.allclose(y, x + 1)
    (d,) = tilesmith.diagnostics(m)
    assert not d.eligible and "mutates its inputs" in d.reason and d.kind == "inference"

    m = tilesmith.compile(Small(), example_inputs=(x,), dynamic=True)
    with torch.no_grad():
        m(x)
    (d,) = tilesmith.diagnostics(m)
    assert not d.eligible and "dynamic shapes" in d.reason

    m = tilesmith.compile(Small(), example_inputs=(x,))
    clean_env.delenv("TILESMITH_ALLOW_CPU")  # admitted at compile time, not when captured
    with torch.no_grad():
        m(x)
    (d,) = tilesmith.diagnostics(m)
    assert not d.eligible and "CPU graph" in d.reason and d.status == "ineligible"
    assert tilesmith.benchmarks(m) == ()


# ---- identity --------------------------------------------------------------------------------------

def test_normalized_wrapper_has_no_cache_paths():
    cache = _identity.inductor_cache_dir()
    src = (f"# kernel path: {cache}/ab/cabc.py\nimport torch\n# see {cache}/x\n"
           "def call(args):\n    pass\n")
    out = _identity.normalize_wrapper(src)
    assert cache not in out and "# kernel path" not in out
    assert _identity.CACHE_DIR_PLACEHOLDER in out and "def call(args):" in out
    assert _identity.code_lines_naming_cache_dir(f"x = '{cache}/k.so'\n") != []


def test_cache_key_is_sha256_of_graph_and_environment():
    args = [torch.randn(4, 8), torch.randn(8)]
    base = dict(fx_graph_cache_key="fabc", normalized_source="src", fx_text="graph", kind="forward",
                args=args, device="cpu", settings={"agency": "medium"})
    k = _identity.cache_key(**base)
    assert HEX64.match(k) and k == _identity.cache_key(**base)
    for change in ({"kind": "backward"}, {"fx_graph_cache_key": "fxyz"},
                   {"settings": {"agency": "high"}}, {"args": [torch.randn(4, 8).t(), args[1]]},
                   {"args": [args[0].double(), args[1]]}, {"fx_text": "other graph"}):
        assert _identity.cache_key(**{**base, **change}) != k
    # Without an FX key, the normalized source identifies the graph.
    nofx = {**base, "fx_graph_cache_key": None}
    assert _identity.cache_key(**nofx) != _identity.cache_key(**{**nofx, "normalized_source": "s2"})
    # File paths in the FX text's comments do not change it.
    assert _identity.cache_key(**{**base, "fx_text": "graph\n  # File: /a/b.py:3 in f"}) == k


# ---- failing closed (in this process) --------------------------------------------------------------

class _ExplodingGate:
    def __init__(self, *a, **k):
        raise RuntimeError("the gate could not start")


def _route_to(clean_env, url):
    clean_env.setenv("TILESMITH_ALLOW_CPU", "1")
    clean_env.setenv("TILESMITH_MODEL", "m")
    clean_env.setenv("OPENAI_API_KEY", "test-key")
    clean_env.setenv("OPENAI_BASE_URL", url)


@needs_mock
def test_failures_on_the_optimization_path_keep_inductor(clean_env, tmp_path, capsys):
    import types

    from tilesmith_testing import fake_gate

    torch.manual_seed(0)
    model, x = Small().eval(), torch.randn(4, 8)
    with torch.no_grad():
        eager = model(x)

    # 1. The gate fails to start: the graph keeps Inductor, the user's call is unaffected.
    broken = types.ModuleType("tilesmith.gate")
    broken.Gate, broken.GateOptions = _ExplodingGate, fake_gate.GateOptions
    broken.GateUnavailable = fake_gate.GateUnavailable
    clean_env.setitem(sys.modules, "tilesmith.gate", broken)
    _route_to(clean_env, "http://127.0.0.1:9/v1")
    m = tilesmith.compile(model, example_inputs=(x,))
    with torch.no_grad():
        assert torch.equal(m(x), eager) and torch.equal(m(x), eager)
    (d,) = tilesmith.diagnostics(m)
    assert d.eligible and d.status.startswith("kept Inductor: internal error")
    assert "the gate could not start" in d.status and tilesmith.benchmarks(m) == ()
    assert HEX64.match(d.cache_key) and os.path.isdir(d.track_dir)
    assert "kept Inductor" in capsys.readouterr().err

    # 2. The model route answers with an error: no candidate, plain Inductor, reason recorded.
    clean_env.setitem(sys.modules, "tilesmith.gate", fake_gate)
    script = [{"kind": "error", "status": 400, "message": "model not found"}]
    with mock_server.MockServer(script, tmp_path) as url:
        _route_to(clean_env, url)
        m = tilesmith.compile(model, example_inputs=(x,), max_model_calls=2)
        with torch.no_grad():
            assert torch.equal(m(x), eager) and torch.equal(m(x), eager)
    (d,) = tilesmith.diagnostics(m)
    assert d.status.startswith("kept Inductor: no candidate accepted: ")
    assert "model not found" in d.status and tilesmith.benchmarks(m) == ()
    assert tilesmith.run_info(m)["model_calls"] == 1
    summary = json.loads((pathlib.Path(d.track_dir) / "track.json").read_text())
    assert summary["status"] == d.status and summary["kind"] == "inference"


def test_progress_redraws_on_a_terminal_and_logs_lines_otherwise(monkeypatch):
    from tilesmith._progress import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        p = Progress(stream)
        p.update("graph 1 forward", "agent turn ...")
        p.update("graph 1 forward", "evaluating candidate 1 ...")
        p.event("graph 1 forward", "installed: 1.20x")
    assert plain.getvalue().splitlines() == [
        "tilesmith [graph 1 forward] agent turn ...",
        "tilesmith [graph 1 forward] evaluating candidate 1 ...",
        "tilesmith [graph 1 forward] installed: 1.20x"]
    assert tty.getvalue().count("\r\x1b[2K") == 3 and tty.getvalue().count("\n") == 1
    monkeypatch.setenv("TILESMITH_PROGRESS", "0")
    quiet = io.StringIO()
    Progress(quiet).event("g", "x")
    assert quiet.getvalue() == ""


@needs_mock
def test_shape_specialized_graphs_get_their_own_tracks(clean_env, tmp_path):
    from tilesmith_testing import fake_gate

    clean_env.setitem(sys.modules, "tilesmith.gate", fake_gate)
    torch.manual_seed(0)
    model = Small().eval()
    xs = [torch.randn(4, 8), torch.randn(6, 8)]
    with mock_server.MockServer(scripts.accept_each(2), tmp_path) as url:
        _route_to(clean_env, url)
        m = tilesmith.compile(model, example_inputs=(xs[0],), dynamic=False)
        with torch.no_grad():
            for x in xs + xs:
                assert torch.allclose(m(x), model(x), atol=1e-6)
    diags = tilesmith.diagnostics(m)
    assert [(d.dynamo_graph, d.kind, d.status) for d in diags] == [
        (1, "inference", "installed"), (2, "inference", "installed")]
    assert len({d.cache_key for d in diags}) == 2 and len({d.track_dir for d in diags}) == 2
    assert [b.graph for b in tilesmith.benchmarks(m)] == [1, 2]
    state = tilesmith._api._session_of(m)
    assert [g.installed_module._ts_calls[0] for g in state.graphs] == [1, 1]


class Twice(torch.nn.Module):
    """The same layer on both sides of a graph break: two identical Inductor graphs."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        x = torch.relu(self.lin(x))
        torch._dynamo.graph_break()
        return torch.relu(self.lin(x))


@needs_mock
def test_an_identical_graph_in_the_same_run_reuses_the_winner(clean_env, tmp_path):
    from tilesmith_testing import fake_gate

    clean_env.setitem(sys.modules, "tilesmith.gate", fake_gate)
    torch.manual_seed(0)
    model, x = Twice().eval(), torch.randn(4, 8)
    with mock_server.MockServer(scripts.accept_each(1), tmp_path) as url:  # one agent run only
        _route_to(clean_env, url)
        m = tilesmith.compile(model, example_inputs=(x,))
        with torch.no_grad():
            for _ in range(2):
                assert torch.allclose(m(x), model(x), atol=1e-6)
    d1, d2 = tilesmith.diagnostics(m)
    assert d1.cache_key == d2.cache_key and d1.status == "installed"
    assert d2.status == "installed (identical to an earlier graph of this run)"
    assert [b.source for b in tilesmith.benchmarks(m)] == ["agent", "same_graph"]
    assert tilesmith.run_info(m)["model_calls"] == 1


@needs_mock
def test_two_processes_optimizing_at_once_corrupt_nothing(tmp_path, inductor_cache):
    cache = tmp_path / "shared"
    with mock_server.MockServer(scripts.reject_then_accept(), tmp_path) as url1, \
            mock_server.MockServer(scripts.reject_then_accept(), tmp_path) as url2:
        procs = [_start_driver("infer", base_url=url, cache_dir=cache,
                               inductor_cache=inductor_cache, gate_log=tmp_path / f"g{i}.jsonl")
                 for i, url in enumerate((url1, url2))]
        results = [_finish_driver(p)[0] for p in procs]
    keys = {r["diagnostics"][0]["cache_key"] for r in results}
    assert len(keys) == 1 and len({r["run_info"]["run_id"] for r in results}) == 2
    statuses = sorted(r["diagnostics"][0]["status"] for r in results)
    # Either both optimized at once, or the later one already found the earlier one's artifact.
    assert statuses in (["installed", "installed"], ["installed", "installed from the artifact cache"])
    for r in results:
        d = r["diagnostics"][0]
        assert r["second_err"] < 1e-5
        track = pathlib.Path(d["track_dir"])
        if d["status"] == "installed":
            assert len(list((track / "attempts").glob("attempt_*.py"))) == 3
            assert len(list((track / "profiles").glob("*.json"))) == 2
        else:
            assert json.loads((track / "cache.json").read_text())["installed"] is True
    artifacts = _core.ArtifactCache(str(cache))
    winner = artifacts.lookup(keys.pop())
    files = artifacts.get(winner)  # verifies the manifest and every file's hash
    assert "_ts_counted" in files["candidate.py"].decode()
    assert not [p for p in cache.rglob(".*")
                if p.is_file() and not p.name.endswith(".lock") and p.name != ".tilesmith-run"]
