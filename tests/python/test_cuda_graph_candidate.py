"""The scripted CUDA-graph candidate of the H200 acceptance (scripts/gpu/tilesmith.sh), checked on
the CPU: its diff applies to real CUDA wrappers and keeps their ABI (through the C++ agent's
patcher and checks), and its output plan (fresh copies, input identity, views of inputs) is right
when the graph capture is emulated on a CPU Inductor wrapper."""

import json
import pathlib

import pytest
import torch

from tilesmith._core import agent
from tilesmith import _identity
from tilesmith_testing import mock_server, scripts
from tilesmith_testing.workspace import ScriptedWorkspace

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "inductor_cuda"
# The scripted diff targets the default graph_partition wrapper (class Runner); the plain
# `def call(args)` fixture is the search agent's.
SAMPLES = sorted(p for p in DATA.glob("*.py") if "_plain." not in p.name)


@pytest.mark.skipif(mock_server.executable() is None, reason="mock_openai_server is not built")
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_cuda_graph_diff_applies_to_real_wrappers_and_keeps_the_abi(sample, tmp_path):
    original = _identity.fx_header("graph", "forward", "g") + _identity.normalize_wrapper(
        sample.read_text())
    ws = ScriptedWorkspace(original, tmp_path)
    with mock_server.MockServer(scripts.cuda_graph_each(1), tmp_path) as url:
        res = agent.run(ws, agent.Budget(1), model="mock", agency="medium",
                        env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": url})
    assert res["outcome"] == "accepted", res["reason"]
    text = res["accepted"][0]["text"]
    anchor = original.index(scripts.ANCHOR + "\n") + len(scripts.ANCHOR) + 1
    assert text == original[:anchor] + "\n".join(scripts.CUDA_GRAPH_LINES) + "\n" + original[anchor:]
    compile(text, sample.name, "exec")


def _cpu_training_forward():
    """(source, constants, args) of a real CPU Inductor training forward (it returns inputs)."""
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    seen = []

    def backend(gm, ex):
        def inner(gm2, ex2, **kw):
            out = compile_fx_inner(gm2, ex2, **kw)
            if not kw.get("is_backward"):
                seen.append(out)
            return out
        with torch._functorch.config.patch(enable_autograd_cache=False):  # a cache hit skips the inner compile
            return compile_fx(gm, ex, inner_compile=inner)

    lin = torch.nn.Linear(8, 8)
    torch._dynamo.reset()
    f = torch.compile(lambda x: torch.relu(lin(x)) * 2, backend=backend)
    x = torch.randn(4, 8, requires_grad=True)
    f(x).sum().backward()
    (cg,) = seen
    args = [lin.weight.detach().clone(), lin.bias.detach().clone(), x.detach().clone()]
    return cg.source_code, dict(cg.constants or {}), args


def test_cuda_graph_candidate_output_plan_with_emulated_capture():
    source, constants, args = _cpu_training_forward()
    at = source.index(scripts.ANCHOR + "\n") + len(scripts.ANCHOR) + 1
    cand_src = source[:at] + "\n".join(scripts.CUDA_GRAPH_LINES) + "\n" + source[at:]
    orig, cand = {}, {}
    exec(compile(source, "orig", "exec"), orig)
    exec(compile(cand_src, "cand", "exec"), cand)

    captures = []

    def emulated_make_graph(fn, static_args):
        # "Capture": one run into static outputs; "replay": re-run and write them in place, as a
        # CUDA graph replay overwrites its own output buffers.
        static_out = fn(list(static_args))
        arg_ptrs = {s.untyped_storage().data_ptr() for s in static_args}
        captures.append(static_out)

        def replay():
            for so, new in zip(static_out, fn(list(static_args))):
                if so.untyped_storage().data_ptr() not in arg_ptrs:
                    so.copy_(new)
        return replay, static_out

    cand["_ts_device_ok"] = lambda a: True
    cand["_ts_make_graph"] = emulated_make_graph

    for step in range(3):
        real = [a + step for a in args]  # new values (and new tensors) every call
        want = orig["call"](list(real))
        call_args = list(real)
        got = cand["call"](call_args)
        assert call_args == []  # args.clear() is kept
        assert len(got) == len(want)
        for g, w, in zip(got, want):
            assert g.shape == w.shape and g.stride() == w.stride() and g.dtype == w.dtype
            assert torch.equal(g, w)
        # Outputs that are inputs come back as the caller's very tensors; the rest are fresh.
        for g, w in zip(got, want):
            is_input = [w is r for r in real]
            assert [g is r for r in real] == is_input
            if not any(is_input):
                assert all(g.untyped_storage().data_ptr() != s.untyped_storage().data_ptr()
                           for s in captures[0])
    assert len(captures) == 1  # captured once, replayed after
