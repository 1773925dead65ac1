"""The CUDA graph candidate, executed: real Inductor wrappers (CPU here), rewritten, run.

usage: run_search_candidates_cpu.py SEARCH_REWRITE_EXE

Compiles a small MLP with Inductor on the CPU, for inference and for a training step (so the
forward returns inputs, views and saved tensors, and the backward reuses donated buffers), takes
each generated wrapper, rewrites it with the search agent's cuda_graph rewrite, and runs original
and candidate side by side with tests/gpu/search_candidates_check.py's checks: outputs, effects
on inputs, aliasing, output freshness. A CPU has no CUDA graph, so the candidate gets the stand-in
graph of tests/python/test_search_runtime.py, which replays the recorded launch sequence into
the captured buffers like a real graph does; everything else is the candidate as written.
"""

import contextlib
import pathlib
import re
import subprocess
import sys
import tempfile
from unittest import mock

import torch
import torch.nn as nn
from torch._inductor.compile_fx import compile_fx, compile_fx_inner

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "gpu"))
import search_candidates_check as check  # noqa: E402

FAKE_SOURCE = (ROOT / "tests" / "python" / "test_search_runtime.py").read_text()
FAKE_GRAPH = FAKE_SOURCE[FAKE_SOURCE.index("class FakeGraph:"):FAKE_SOURCE.index("@contextlib.contextmanager")]


def wrappers():
    sources = []

    def backend(gm, example_inputs):
        def inner(gm2, ex2, **kw):
            out = compile_fx_inner(gm2, ex2, **kw)
            kind = "backward" if kw.get("is_backward") else ("inference" if kw.get("is_inference") else "forward")
            sources.append((kind, out.source_code))
            return out

        with torch._functorch.config.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, inner_compile=inner)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 8))
    x = torch.randn(4, 32)
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, backend=backend)(x)
    torch._dynamo.reset()
    torch.compile(model, backend=backend)(x).pow(2).mean().backward()
    return sources


def for_cpu(text):
    """What only a CPU run needs: CPU buffers allowed (the rewrite refuses them), the stand-in graph."""
    text = text.replace("empty_strided_cpu((", "_ts_cpu_alloc((")
    return text.replace("async_compile = AsyncCompile()",
                        "async_compile = AsyncCompile()\n_ts_cpu_alloc = empty_strided_cpu", 1)


def with_fake_graph(candidate):
    candidate = candidate.replace(
        "_ts_graphed_call = _TsGraphedCall(written_inputs=",
        FAKE_GRAPH + "\n_ts_graphed_call = _TsGraphedCall(graph_factory=FakeGraph, "
        "stream_factory=FakeStream, device_type='cpu', written_inputs=")
    # The stand-in records what the capture ran (a real graph records the launches).
    def recorder(m):
        j, eager = m.group(1), m.group(2)
        return (f"{j}def _ts_record(a, _f={eager}):\n"
                f"{j}    saved = list(a)\n"
                f"{j}    outs = _f(a)\n"
                f"{j}    if FakeGraph.capturing is not None:\n"
                f"{j}        FakeGraph.capturing.recorded = (lambda b: _f(list(b)), saved, outs)\n"
                f"{j}    return outs\n"
                f"{j}_ts_out = _ts_graphed_call(_ts_record, _ts_args)")

    return re.sub(r"^( *)_ts_out = _ts_graphed_call\((.+?), _ts_args\)$", recorder, candidate,
                  flags=re.M)


class _Stream:
    def wait_stream(self, other):
        pass


@contextlib.contextmanager
def cpu_cuda_api():
    with mock.patch.object(torch.cuda, "is_current_stream_capturing", lambda: False), \
            mock.patch.object(torch.cuda, "device", lambda d: contextlib.nullcontext()), \
            mock.patch.object(torch.cuda, "current_stream", lambda d=None: _Stream()), \
            mock.patch.object(torch.cuda, "stream", lambda s: contextlib.nullcontext()):
        yield


def main():
    exe = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for i, (kind, source) in enumerate(wrappers()):
            orig = tmp / f"mlp.{i}.{kind}.py"
            orig.write_text(for_cpu(source))
            cand = tmp / f"mlp.{i}.{kind}.cuda_graph.py"
            r = subprocess.run([exe, str(orig), str(cand), "cuda_graph"], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {kind}: the rewrite refused: {r.stderr.strip()}")
                failures += 1
                continue
            cand.write_text(with_fake_graph(cand.read_text()))
            assert "_ts_record" in cand.read_text(), "the stand-in graph was not wired in"
            with cpu_cuda_api():
                rec = check.check(orig, cand)
            graph = rec.get("graph", {})
            ok = rec["ok"] and graph.get("captures", 0) >= 1 and graph.get("replays", 0) >= 1
            print(f"{'ok  ' if ok else 'FAIL'} {kind}: {graph} {'; '.join(rec['failures'])[:400]}")
            failures += not ok
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
