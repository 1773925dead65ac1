"""The op layer's whole launch path on the CPU: the same bindings over the kernels' own fp64
references (`_tskernels_ref`), so pointers, strides, dtype codes, params and every layout the
GPU tests use are checked in CI, and torch.compile runs the op end to end (aot_eager)."""

from __future__ import annotations

import pytest
import torch

from tileops import _kernels, manifest, ops, testing

IMPLEMENTED = [o.name for o in manifest.load().ops if o.status == "implemented"]
BUILT = _kernels._import("tileops._tskernels_ref")
pytestmark = pytest.mark.skipif(isinstance(BUILT, ImportError),
                                reason="_tskernels_ref is not built here (no CUDA toolkit)")


def _built(op_name):
    return not isinstance(BUILT, ImportError) and op_name in BUILT.kernels().values()


def _calls():
    """Every contract call of every implemented op (tileops.testing.contract_calls)."""
    return [pytest.param(name, call, id=f"{name}-{call.id()}")
            for name in IMPLEMENTED for call in testing.contract_calls(manifest.op(name))]


@pytest.fixture
def reference():
    with _kernels.use_reference_backend() as m:
        yield m


def _results(op, tensors, out):
    if not op.spec.outputs:
        return [t for t, info in zip(tensors, op.spec.inputs) if info["mutated"]]
    return [out] if isinstance(out, torch.Tensor) else list(out)


def _check(spec, got, want):
    for g, w in zip(got, want):
        rtol, atol = testing.tolerance(spec, g.dtype)
        torch.testing.assert_close(g.double(), w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("op_name,call", _calls())
def test_launch_path_against_the_reference(reference, op_name, call, layout):
    """The op through its kernel's fp64 CPU reference, against the spec's own reference, in
    every layout the spec admits."""
    if not _built(op_name):
        pytest.skip(f"{op_name}'s kernel is not in this build")
    spec = manifest.op(op_name)
    if sum(torch.Size(d[1]).numel() for d in call.inputs if d is not None) > 1 << 22:
        pytest.skip("large case: the GPU tests cover it")
    tensors = testing.layout_inputs(spec, testing.make_inputs(spec, call.inputs, "cpu"), layout)
    op = ops.get(op_name)(**call.params)
    want = testing.reference(spec, [None if t is None else t.clone() for t in tensors],
                             op.param_values)
    _check(spec, _results(op, tensors, op(*tensors)), want)


@pytest.mark.parametrize("op_name,call", _calls())
def test_run_into_fills_every_element_of_poisoned_outputs(reference, op_name, call):
    """The caller-buffer path (Op.run_into, what Tilesmith's rewrites use) on the references."""
    from test_contracts import _poisoned_outputs

    spec = manifest.op(op_name)
    if not spec.outputs or not _built(op_name):
        pytest.skip("in place, or not in this build")
    if sum(torch.Size(d[1]).numel() for d in call.inputs if d is not None) > 1 << 22:
        pytest.skip("large case: the GPU tests cover it")
    tensors = testing.make_inputs(spec, call.inputs, "cpu")
    op = ops.get(op_name)(**call.params)
    outs = _poisoned_outputs(spec, call, "cpu", "permuted")
    op.run_into(outs, *tensors)
    _check(spec, outs, testing.reference(spec, [None if t is None else t.clone() for t in tensors],
                                         op.param_values))


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_torch_compile_runs_the_op_end_to_end(reference, op_name):
    if not _built(op_name):
        pytest.skip(f"{op_name}'s kernel is not in this build")
    spec = manifest.op(op_name)
    base = testing.base_call(spec)
    tensors = testing.make_inputs(spec, base.inputs, "cpu")
    op = ops.get(op_name)(**base.params)
    want = testing.reference(spec, [None if t is None else t.clone() for t in tensors],
                             op.param_values)
    mutated = [i for i, info in enumerate(spec.inputs) if info["mutated"]]
    in_place = not spec.outputs

    def call(*ts):
        out = op(*ts)
        return [ts[i] for i in mutated] if in_place else out

    torch._dynamo.reset()
    got = torch.compile(call, fullgraph=True, backend="aot_eager")(*tensors)
    _check(spec, [got] if isinstance(got, torch.Tensor) else list(got), want)


def test_tuning_is_off_on_the_reference_backend(reference, tmp_path, monkeypatch):
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    from tileops.ops import SoftmaxFwdOp

    op = SoftmaxFwdOp().request_tune()
    op(torch.randn(4, 8))
    assert op.chosen_configs() == {} and not (tmp_path / "tileops").exists()


def test_gpu_tensors_are_refused_by_the_reference_backend(reference):
    from tileops.ops import SoftmaxFwdOp

    with pytest.raises(ValueError, match="the reference backend takes CPU tensors"):
        SoftmaxFwdOp()(torch.empty(4, 8, device="meta"))


def _rope_inputs(s=4, hq=4, hk=2, d=8, p=16):
    positions = torch.arange(s, dtype=torch.int64)
    q, k = torch.randn(s, hq, d), torch.randn(s, hk, d)
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
    f = torch.outer(torch.arange(p, dtype=torch.float32), inv)
    return positions, q, k, torch.cat([f.cos(), f.sin()], dim=1)


def test_rope_refuses_aliased_and_broadcast_writes(reference):
    from tileops.manifest import BindError
    from tileops.ops import RoPENeoXFwdOp

    positions, q, _, cache = _rope_inputs(hq=2)
    before = q.clone()
    with pytest.raises(BindError, match="q is written in place and shares memory with k"):
        RoPENeoXFwdOp()(positions, q, q, cache)
    assert torch.equal(q, before)  # refused before anything ran
    row = torch.randn(1, 2, 8)
    with pytest.raises(BindError, match=r"dimension 0 \(size 4\) is broadcast"):
        RoPENeoXFwdOp()(positions, row.expand(4, 2, 8), torch.randn(4, 2, 8), cache)
    assert row.shape == (1, 2, 8)


def test_rope_on_slices_of_one_fused_qkv_buffer(reference):
    from tileops.ops import RoPENeoXFwdOp

    positions, q, k, cache = _rope_inputs(hq=4, hk=2)
    qkv = torch.cat([q, k, torch.randn(4, 2, 8)], dim=1)  # [S, Hq + 2 Hk, D]
    fq, fk = qkv[:, :4], qkv[:, 4:6]
    RoPENeoXFwdOp()(positions, fq, fk, cache)
    RoPENeoXFwdOp()(positions, q, k, cache)
    torch.testing.assert_close(fq, q)
    torch.testing.assert_close(fk, k)
