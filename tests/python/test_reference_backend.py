"""The op layer's whole launch path on the CPU: the same bindings over the kernels' own fp64
references (`_tskernels_ref`), so pointers, strides, dtype codes, params and every layout the
GPU tests use are checked in CI, and torch.compile runs the op end to end (aot_eager)."""

from __future__ import annotations

import pytest
import torch

from tileops import _kernels, manifest, registry, testing

registry.load_builtin_ops()
IMPLEMENTED = [o.name for o in manifest.load().ops if o.status == "implemented"]
BUILT = _kernels._import("_tskernels_ref")
pytestmark = pytest.mark.skipif(isinstance(BUILT, ImportError),
                                reason="_tskernels_ref is not built here (no CUDA toolkit)")


def _built(op_name):
    return not isinstance(BUILT, ImportError) and op_name in BUILT.kernels().values()


def _cases():
    out = []
    for name in IMPLEMENTED:
        spec = manifest.op(name)
        for case in testing.CASES.get(name, []):
            for dt in testing.dtype_cases(spec):
                out.append(pytest.param(name, case, dt,
                                        id=f"{name}-{case.id()}-{'-'.join(dt.values())}"))
    return out


@pytest.fixture
def reference():
    with _kernels.use_reference_backend() as m:
        yield m


def _results(op, tensors, out):
    if not op.spec.outputs:
        return [t for t, info in zip(tensors, op.spec.inputs) if info["mutated"]]
    return [out] if isinstance(out, torch.Tensor) else list(out)


def _check(op_name, got, want):
    for g, w in zip(got, want):
        rtol, atol = testing.tolerance(op_name, g.dtype)
        torch.testing.assert_close(g.double(), w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("op_name,case,dtypes", _cases())
def test_launch_path_against_the_reference(reference, op_name, case, dtypes, layout):
    if not _built(op_name):
        pytest.skip(f"{op_name}'s kernel is not in this build")
    spec = manifest.op(op_name)
    inputs, _ = testing.instantiate(spec, case, dtypes)
    if sum(torch.Size(d[1]).numel() for d in inputs if d is not None) > 1 << 22:
        pytest.skip("large case: the GPU tests cover it")
    tensors = testing.layout_inputs(spec, testing.make_inputs(spec, inputs, "cpu"), layout)
    op = registry.get(op_name)(**case.params)
    want = testing.reference(op_name, [None if t is None else t.clone() for t in tensors],
                             op.param_values)
    _check(op_name, _results(op, tensors, op(*tensors)), want)


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_torch_compile_runs_the_op_end_to_end(reference, op_name):
    if not _built(op_name):
        pytest.skip(f"{op_name}'s kernel is not in this build")
    spec = manifest.op(op_name)
    case = testing.CASES[op_name][2]
    inputs, _ = testing.instantiate(spec, case, testing.dtype_cases(spec)[0])
    tensors = testing.make_inputs(spec, inputs, "cpu")
    op = registry.get(op_name)(**case.params)
    want = testing.reference(op_name, [None if t is None else t.clone() for t in tensors],
                             op.param_values)
    mutated = [i for i, info in enumerate(spec.inputs) if info["mutated"]]
    in_place = not spec.outputs

    def call(*ts):
        out = op(*ts)
        return [ts[i] for i in mutated] if in_place else out

    torch._dynamo.reset()
    got = torch.compile(call, fullgraph=True, backend="aot_eager")(*tensors)
    _check(op_name, [got] if isinstance(got, torch.Tensor) else list(got), want)


def test_tuning_is_off_on_the_reference_backend(reference, tmp_path, monkeypatch):
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    from tileops.softmax import SoftmaxFwdOp

    op = SoftmaxFwdOp().request_tune()
    op(torch.randn(4, 8))
    assert op.chosen_configs() == {} and not (tmp_path / "tileops").exists()


def test_gpu_tensors_are_refused_by_the_reference_backend(reference):
    from tileops.softmax import SoftmaxFwdOp

    with pytest.raises(ValueError, match="the reference backend takes CPU tensors"):
        SoftmaxFwdOp()(torch.empty(4, 8, device="meta"))
