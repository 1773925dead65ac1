"""The search agent's direct-launch rewrite, run on the CPU: the built-in search proposes it for a
real Inductor CUDA wrapper, and its call() is executed with stand-in kernels, allocations and
library calls, so which path each launch takes (CachingAutotuner.run or the kernel's launcher)
and what the outputs are can be checked without a GPU."""

import contextlib
import pathlib
import re
import types
from unittest import mock

import pytest
import torch

from tilesmith._core import agent
from tilesmith import _identity
from tilesmith_testing.workspace import ScriptedWorkspace

ROOT = pathlib.Path(__file__).resolve().parents[2]
WRAPPER = ROOT / "tests/data/inductor_cuda/tiny_fp32_plain.0.inference.py"
HELPER = ROOT / "core/agent/search/direct_launch.py"
BANNER = "# ---- tilesmith-search: direct Triton launches"


def _accept_only_direct_launch(text):
    """The gate's verdicts: every proposal is not faster but the direct-launch one."""
    if BANNER in text:
        return {"verdict": "accepted", "reason": "accepted: 1.05x, confirmed", "speedup": 1.05,
                "confirmed": True}
    return {"verdict": "rejected", "kind": "not_faster", "reason": "rejected: not_faster",
            "speedup": 1.0, "confirmed": False}


def _candidate(tmp_path) -> str:
    original = _identity.fx_header("graph", "inference", "g") + _identity.normalize_wrapper(
        WRAPPER.read_text())
    ws = ScriptedWorkspace(original, tmp_path, _accept_only_direct_launch)
    res = agent.run(ws, agent.Budget(12), model="tilesmith-search", agency="medium", env={})
    assert res["outcome"] == "accepted", res["reason"]
    (text,) = [c["text"] for c in res["accepted"]]
    assert BANNER in text and "class _TsGraphedCall" not in text
    return text


def _entry_points(text: str) -> str:
    """The candidate from the helper's banner to the end of `_ts_call_run` (the kernels above it
    are Triton sources, which need a GPU to compile)."""
    start = text.index(BANNER)
    body = text.index("\n", text.index("def _ts_call_run(args):")) + 1
    after = re.search(r"^\S", text[body:], re.M)
    return text[start:body + after.start()] if after else text[start:]


class FakeKernel:
    """A CachingAutotuner stand-in: run() and the one launcher compute the same thing (the
    wrapper's fused addmm-bias + SiLU + layer norm, here simply `buf += bias`) and say which of
    them ran."""

    def __init__(self, log, launchers=1):
        self.log = log
        self.inductor_meta = {}
        self.launchers = [self._launcher for _ in range(launchers)]

    def _compute(self, buf, bias, *rest):
        buf.add_(bias)

    def run(self, *args, stream):
        self.log.append("run")
        self._compute(*args)

    def _launcher(self, *args, stream):
        self.log.append("launcher")
        self._compute(*args)


class MeasuringKernel(FakeKernel):
    """A subclass with a run() of its own (as DebugAutotuner's, which times every launch)."""

    def run(self, *args, stream):
        self.log.append("measured run")
        self._compute(*args)


def _load(code, scope):
    """Executes candidate code in `scope`, with FakeKernel.run standing in for CachingAutotuner's
    plain run()."""
    exec(compile(code, "candidate", "exec"), scope)
    scope["_TS_PLAIN_RUNS"].add(FakeKernel.run)
    return scope


def _scope(kernel):
    return {
        "torch": torch,
        "empty_strided_cuda": lambda size, stride, dtype: torch.empty_strided(size, stride,
                                                                            dtype=dtype),
        "extern_kernels": types.SimpleNamespace(mm=lambda a, b, out: torch.mm(a, b, out=out)),
        "reinterpret_tensor": lambda t, size, stride, offset: t.as_strided(size, stride, offset),
        "assert_size_stride": lambda *a: None,
        "get_raw_stream": lambda device: 0,
        "triton_per_fused_addmm_native_layer_norm_silu_0": kernel,
    }


@contextlib.contextmanager
def _cpu_device_calls():
    with mock.patch.object(torch.cuda, "_DeviceGuard", lambda d: contextlib.nullcontext()), \
            mock.patch.object(torch.cuda, "set_device", lambda d: None):
        yield


def _args():
    torch.manual_seed(0)
    shapes = [(256, 256), (256,), (8, 256), (256, 256), (256,), (256, 256), (256,), (256, 256),
              (256,)]
    return [torch.randn(s) for s in shapes]


def test_launches_go_through_the_launchers_once_the_first_call_settled_them(tmp_path):
    code = _entry_points(_candidate(tmp_path))
    log = []
    scope = _scope(FakeKernel(log))
    _load(code, scope)
    args = _args()
    with _cpu_device_calls():
        want = scope["_ts_call_run"](list(args))
        launches = len(log)
        assert launches > 0 and set(log) == {"run"}
        log.clear()
        first = scope["call"](list(args))  # the original: run() compiles and autotunes
        assert log == ["run"] * launches
        log.clear()
        second = scope["call"](list(args))
        assert log == ["launcher"] * launches
        # The profiler (or a debug mode) watching: run() again, which records each launch.
        log.clear()
        with mock.patch.object(torch.autograd.profiler, "_is_profiler_enabled", True):
            third = scope["call"](list(args))
        assert log == ["run"] * launches
    for got in (first, second, third):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)


def test_a_kernel_with_several_configs_keeps_run_and_stops_asking(tmp_path):
    code = _entry_points(_candidate(tmp_path))
    log = []
    kernel = FakeKernel(log, launchers=2)  # autotuning not settled: run() still has work
    scope = _scope(kernel)
    _load(code, scope)
    with _cpu_device_calls():
        for _ in range(6):
            scope["call"](_args())
    assert set(log) == {"run"}
    assert scope["_ts_direct"] is None and scope["_ts_direct_tries"] == 3


@pytest.mark.parametrize("blocker", ["dump_launch_params", "triton_interpret", "coordesc",
                                     "cubin", "global_scratch", "profile_scratch", "own_run"])
def test_launchers_that_need_run_are_not_taken(blocker):
    scope = _load(HELPER.read_text(), {"torch": torch})
    kernel = FakeKernel([])
    launcher = types.SimpleNamespace(config=types.SimpleNamespace())
    kernel.launchers = [launcher]
    assert scope["_ts_direct_launchers"]((kernel,)) == [launcher]
    if blocker == "coordesc":
        kernel.inductor_meta = {"coordinate_descent_tuning": True}
    elif blocker == "cubin":
        launcher.store_cubin = True
    elif blocker.endswith("_scratch"):
        setattr(launcher, blocker, 1024)
    elif blocker == "own_run":
        kernel.__class__ = MeasuringKernel
    else:
        setattr(kernel, blocker, True)
    assert scope["_ts_direct_launchers"]((kernel,)) is None
    if blocker == "coordesc":  # once coordinate descent has run, its launcher is final
        launcher.config.found_by_coordesc = True
        assert scope["_ts_direct_launchers"]((kernel,)) == [launcher]


def test_only_inductors_own_run_counts_as_plain():
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner, DebugAutotuner
    scope = {"torch": torch}
    exec(compile(HELPER.read_text(), str(HELPER), "exec"), scope)
    assert CachingAutotuner.run in scope["_TS_PLAIN_RUNS"]
    assert DebugAutotuner.run not in scope["_TS_PLAIN_RUNS"]


@pytest.mark.gpu
def test_real_launchers_take_the_arguments_run_is_given():
    # A real Inductor graph on the GPU: each Triton kernel's settled launcher, called where
    # call() calls run(), gives the same outputs as the original.
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from torch._inductor.codecache import PyCodeCache
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    def f(x, w):
        return torch.nn.functional.silu(torch.nn.functional.group_norm(x, 4) * w).sum(-1)

    x, w = torch.randn(8, 32, 64, device="cuda"), torch.randn(64, device="cuda")
    torch._dynamo.reset()
    compiled = torch.compile(f)
    want = compiled(x, w)
    mods = [m for m in list(PyCodeCache.modules) if hasattr(m, "call")
            and any(isinstance(v, CachingAutotuner) for v in vars(m).values())]
    assert mods
    scope = _load(HELPER.read_text(), {"torch": torch})
    for mod in mods:
        kernels = [v for v in vars(mod).values() if isinstance(v, CachingAutotuner)
                   and v.launchers]
        launchers = scope["_ts_direct_launchers"](kernels)
        assert launchers is not None and len(launchers) == len(kernels)
        for k, launcher in zip(kernels, launchers):
            k.run = launcher  # what the candidate's call() calls once settled
    try:
        got = compiled(x, w)
        torch.cuda.synchronize()
    finally:
        for mod in mods:
            for v in vars(mod).values():
                if isinstance(v, CachingAutotuner) and "run" in vars(v):
                    del v.run
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got, f(x, w), rtol=1e-4, atol=1e-4)
