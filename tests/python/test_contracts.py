"""Contract tests generated from the manifest: for every implemented entry, the calls of
tileops.testing.contract_calls (its `cases:`, its workloads scaled down, edge calls from its
signature, every declared dtype), the rejects found from its constraints, its layouts.

Spec-level tests (CI, CPU): the op accepts what the binder accepts and rejects the rest with the
binder's own message (constraints, dtypes, ranks, sizes, layouts, devices); the torch.library fake
infers the binder's outputs; torch.compile traces the op as one node with fullgraph=True.
GPU tests (`gpu` marker): values against the entry's reference in fp64, per dtype and layout,
every kernel config on the entry's cases, tuned configs, CUDA-graph capture and replay,
torch.compile on CUDA tensors.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import json
from pathlib import Path

import pytest
import torch

from tileops import KernelsNotBuilt, _kernels, manifest, ops, testing, tune
from tileops.op import TORCH_DTYPES, tensor_arg

IMPLEMENTED = [o.name for o in manifest.load().ops if o.status == "implemented"]
ALL_DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "uint8"]


def _spec(name):
    return manifest.op(name)


def _op(name, params=None):
    return ops.get(name)(**(params or {}))


def _calls():
    return [pytest.param(name, call, id=f"{name}-{call.id()}")
            for name in IMPLEMENTED for call in testing.contract_calls(_spec(name))]


def _rejects():
    return [pytest.param(name, r, id=f"{name}-{r.message[:40]}")
            for name in IMPLEMENTED for r in testing.rejects(_spec(name))]


def _meta(inputs):
    return [None if d is None else torch.empty(d[1], dtype=TORCH_DTYPES[d[0]], device="meta")
            for d in inputs]


def _binder_message(spec, tensors, params):
    with pytest.raises(manifest.BindError) as e:
        spec.bind([None if t is None else tensor_arg(t) for t in tensors], params)
    return str(e.value)


# -- spec level (CPU) ---------------------------------------------------------------------------

@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_every_entry_has_a_class_a_reference_calls_and_rejects(op_name):
    spec = _spec(op_name)
    assert ops.get(op_name).spec.name == op_name
    assert spec.reference, f"{op_name}: the entry names no reference:"
    testing.reference_function(spec)  # compiles or imports
    calls = testing.contract_calls(spec)
    labels = {c.label for c in calls}
    assert {c["label"] for c in spec.cases()} <= labels  # every `cases:` row is a call
    assert any(c.kind == "workload" for c in calls), "no workload scales down to the CPU budget"
    declared = {d for ts in testing.dtype_sets(spec).values() for d in ts}
    assert {d[0] for c in calls for d in c.inputs if d is not None} >= declared
    found = {r.message for r in testing.rejects(spec)}
    for expr, message in spec.constraints:
        assert (message or expr) in found, (
            f"{op_name}: no generated call violates '{expr}'; testing.rejects varies one value "
            "of a valid call at a time")


@pytest.mark.parametrize("op_name", [o.name for o in manifest.load().ops])
def test_every_entrys_reference_fits_its_signature(op_name):
    """Spec-only entries too: their reference is what a grown kernel will be tested against."""
    assert testing.reference_mismatch(_spec(op_name)) is None


@pytest.mark.parametrize("op_name,call", _calls())
def test_accepts_spec_calls_and_infers_outputs(op_name, call):
    spec = _spec(op_name)
    bound = spec.bind(list(call.inputs), call.params)
    op = _op(op_name, call.params)
    assert op.bind(_meta(call.inputs)).outputs == bound.outputs
    # The fake implementation of the torch.library op infers the same outputs.
    outs = op._torch_op(*_meta(call.inputs), *op._param_tuple, op.key)
    outs = [] if outs is None else [outs] if isinstance(outs, torch.Tensor) else list(outs)
    assert [(str(o.dtype).removeprefix("torch."), tuple(o.shape)) for o in outs] == bound.outputs
    assert all(o.device.type == "meta" for o in outs)


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_rejects_dtypes_outside_the_signature_with_the_binders_message(op_name):
    spec = _spec(op_name)
    base = testing.base_call(spec)
    tried = 0
    for var, allowed in testing.dtype_sets(spec).items():
        typed = [info["dtype"] == var for info in spec.inputs]
        for bad in (d for d in ALL_DTYPES if d not in allowed):
            tensors = [None if d is None else
                       torch.empty(d[1], dtype=TORCH_DTYPES[bad if t else d[0]], device="meta")
                       for d, t in zip(base.inputs, typed)]
            expected = _binder_message(spec, tensors, base.params)
            with pytest.raises(manifest.BindError) as e:
                _op(op_name, base.params)(*tensors)
            assert str(e.value) == expected
            assert op_name in expected and bad in expected
            tried += 1
    assert tried > 0


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_rejects_mixed_dtypes(op_name):
    spec = _spec(op_name)
    base = testing.base_call(spec)
    for var, allowed in testing.dtype_sets(spec).items():
        slots = [i for i, info in enumerate(spec.inputs)
                 if info["dtype"] == var and base.inputs[i] is not None]
        if len(slots) < 2 or len(allowed) < 2:
            continue
        tensors = _meta(base.inputs)
        other = next(d for d in allowed if d != base.inputs[slots[-1]][0])
        tensors[slots[-1]] = tensors[slots[-1]].to(TORCH_DTYPES[other])
        expected = _binder_message(spec, tensors, base.params)
        with pytest.raises(manifest.BindError) as e:
            _op(op_name, base.params)(*tensors)
        assert str(e.value) == expected


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_rejects_wrong_ranks_and_sizes(op_name):
    spec = _spec(op_name)
    base = testing.base_call(spec)
    checked = 0
    for i, d in enumerate(base.inputs):
        if d is None:
            continue
        grown = tuple(d[1]) + (2,)
        resized = tuple(d[1][:-1]) + (d[1][-1] + 1,)
        for shape in (grown, resized, ()):
            tensors = _meta(base.inputs)
            tensors[i] = torch.empty(shape, dtype=tensors[i].dtype, device="meta")
            try:
                spec.bind([None if t is None else tensor_arg(t) for t in tensors], base.params)
                continue  # still a valid call (a [*B, N] input grows a batch dim)
            except manifest.BindError as e:
                expected = str(e)
            with pytest.raises(manifest.BindError) as got:
                _op(op_name, base.params)(*tensors)
            assert str(got.value) == expected
            checked += 1
    assert checked > 0, f"{op_name}: no shape change was rejected"


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_rejects_a_last_dim_that_is_not_contiguous(op_name):
    spec = _spec(op_name)
    base = testing.base_call(spec)
    checked = 0
    for i, info in enumerate(spec.inputs):
        d = base.inputs[i]
        if d is None or info["layout"] == "any" or len(d[1]) < 1 or d[1][-1] < 2:
            continue
        shape = tuple(d[1])
        # column-major: the last dim has the largest stride; a 1-D input every other element
        strides = [1] * len(shape) if len(shape) > 1 else [2]
        for j in range(1, len(shape)):
            strides[j] = strides[j - 1] * shape[j - 1]
        tensors = _meta(base.inputs)
        tensors[i] = torch.empty_strided(shape, strides, dtype=tensors[i].dtype, device="meta")
        expected = _binder_message(spec, tensors, base.params)
        assert "contiguous" in expected
        with pytest.raises(manifest.BindError) as got:
            _op(op_name, base.params)(*tensors)
        assert str(got.value) == expected
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("op_name,reject", _rejects())
def test_spec_constraints_reject(op_name, reject):
    spec = _spec(op_name)
    dt = testing.dtype_cases(spec)[0]
    with pytest.raises(manifest.BindError, match=reject.message):
        spec.instantiate({**reject.values, **dt}, reject.params, list(reject.absent))
    if reject.params:  # a bad param reaches the op through its constructor, and is refused there
        base = testing.base_call(spec)
        op = _op(op_name, {**base.params, **reject.params})
        tensors = _meta(base.inputs)
        try:
            spec.bind([None if t is None else tensor_arg(t) for t in tensors], op.param_values)
            return  # the violation needs the reject's dims too
        except manifest.BindError as e:
            expected = str(e)
        with pytest.raises(manifest.BindError, match=reject.message) as e:
            op(*tensors)
        assert str(e.value) == expected


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_a_valid_call_off_the_gpu_says_why_it_cannot_run(op_name):
    spec = _spec(op_name)
    base = testing.base_call(spec)
    tensors = testing.make_inputs(spec, base.inputs, "cpu")
    with pytest.raises((ValueError, KernelsNotBuilt)) as e:
        _op(op_name, base.params)(*tensors)
    assert op_name in str(e.value)
    assert "CUDA" in str(e.value) or "not built" in str(e.value)


@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_torch_compile_fullgraph_traces_one_custom_op(op_name):
    """dynamo traces the op without a graph break; the graph holds only the op's custom op."""
    spec = _spec(op_name)
    base = testing.base_call(spec)
    bound = spec.bind(list(base.inputs), base.params)
    op = _op(op_name, base.params)
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(lambda *ts: op(*ts), fullgraph=True, backend=backend)
    result = compiled(*_meta(base.inputs))
    assert len(graphs) == 1
    calls = [n for n in graphs[0].graph.nodes if n.op == "call_function"]
    assert [str(n.target) for n in calls] == [f"tileops.{op_name}.default"]
    if bound.outputs:
        outs = [result] if isinstance(result, torch.Tensor) else list(result)
        assert [tuple(o.shape) for o in outs] == [tuple(s) for _, s in bound.outputs]


def test_tune_cache_writes_atomically_and_merges(tmp_path, monkeypatch):
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    tune.forget()
    a = tune.TuneCache("NVIDIA H200", "0.1.0")
    b = tune.TuneCache("NVIDIA H200", "0.1.0")  # another process's view
    a.put("RMSNormFwdOp|x", 3, 10.0, {0: 12.0, 3: 10.0})
    b.put("SoftmaxFwdOp|y", 1, 5.0, {1: 5.0})
    doc = json.loads(a.path.read_text())
    assert a.path.parent == tmp_path / "tileops" / "tune"
    assert a.path.name == "NVIDIA_H200-v0.1.0.json"
    assert set(doc["entries"]) == {"RMSNormFwdOp|x", "SoftmaxFwdOp|y"}
    assert tune.TuneCache("NVIDIA H200", "0.1.0").get("RMSNormFwdOp|x") == 3
    assert tune.TuneCache("NVIDIA H200", "0.2.0").get("RMSNormFwdOp|x") is None
    assert not [p for p in a.path.parent.iterdir() if p.suffix == ".tmp"]
    a.path.write_text("{torn")
    assert tune.TuneCache("NVIDIA H200", "0.1.0").get("RMSNormFwdOp|x") is None


def test_tuned_choices_are_keyed_by_the_kernel_build_and_the_timing_method():
    from tileops import timing
    from tileops.op import __version__, tune_version

    version, build, method = tune_version().split("+")
    assert version == __version__ and method == timing.METHOD
    if not _kernels.available():
        assert build == "none"
        return
    data = Path(importlib.import_module("tileops._tskernels").__file__).read_bytes()
    assert build == hashlib.sha256(data).hexdigest()[:12]


def test_launch_errors_name_the_op_and_the_cuda_error():
    if not _kernels.available():
        pytest.skip("_tskernels is not built here")
    from tileops import _tskernels
    x = (0, 1, (4, 8), (8, 1))  # null pointers: the launcher refuses
    with pytest.raises(_tskernels.LaunchError) as e:
        _tskernels.launch("rms_norm", [x, (0, 1, (8,), (1,))], [x], [1e-6], -1, 0)
    assert str(e.value) == ("RMSNormFwdOp: rms_norm failed: invalid argument "
                            "(cudaErrorInvalidValue)")


def test_the_kernel_entry_point_refuses_malformed_calls_with_the_kernel_named():
    m = _kernels._import("tileops._tskernels_ref")
    if isinstance(m, ImportError):
        pytest.skip("_tskernels_ref is not built here")
    x = (0, 1, (4, 8), (8, 1))
    with pytest.raises(m.LaunchError, match=r"^RMSNormFwdOp: rms_norm failed: invalid argument"):
        m.launch("rms_norm", [x], [x], [1e-6], -1, 0)  # the weight is missing
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        m.launch("nope", [], [], [], -1, 0)
    with pytest.raises(ValueError, match=r"rms_norm: input 0: unknown type code 7"):
        m.launch("rms_norm", [(0, 7, (4, 8), (8, 1))], [x], [1e-6], -1, 0)
    with pytest.raises(ValueError, match=r"rms_norm: input 0: 2 sizes but 1 strides"):
        m.launch("rms_norm", [(0, 1, (4, 8), (8,))], [x], [1e-6], -1, 0)
    with pytest.raises(TypeError, match="a kernel param is None, bool, int or float, not str"):
        m.launch("rms_norm", [x, x], [x], ["eps"], -1, 0)
    # Every kernel the module has serves an op of the manifest, under the op's own name.
    assert set(m.kernels().values()) <= {op.name for op in manifest.load().ops}


# -- GPU -----------------------------------------------------------------------------------------

def _run(op, tensors):
    out = op(*tensors)
    spec = op.spec
    if not spec.outputs:  # in place: the mutated inputs are the results
        return [t for t, info in zip(tensors, spec.inputs) if info["mutated"]]
    return [out] if isinstance(out, torch.Tensor) else list(out)


def _check(spec, got, want):
    for g, w in zip(got, want):
        rtol, atol = testing.tolerance(spec, g.dtype)
        torch.testing.assert_close(g.double(), w.to(g.device), rtol=rtol, atol=atol)


def _want(op, tensors):
    return testing.reference(op.spec, [None if t is None else t.clone() for t in tensors],
                             op.param_values)


@pytest.mark.gpu
@pytest.mark.parametrize("layout", testing.LAYOUTS)
@pytest.mark.parametrize("op_name,call", _calls())
def test_values_against_the_reference(op_name, call, layout):
    spec = _spec(op_name)
    tensors = testing.layout_inputs(spec, testing.make_inputs(spec, call.inputs, "cuda"), layout)
    op = _op(op_name, call.params)
    want = _want(op, tensors)
    got = _run(op, tensors)
    torch.cuda.synchronize()
    _check(spec, got, want)


def _poisoned_outputs(spec, call, device, layout):
    """The call's outputs as caller-given buffers full of NaN (-1 for integers), each in `layout`
    where the spec lets the kernel take its strides: an element the kernel leaves unwritten
    stays visibly wrong."""
    outs = []
    for (dt, shape), info in zip(spec.bind(list(call.inputs), call.params).outputs,
                                 spec.outputs):
        dtype = TORCH_DTYPES[dt]
        t = torch.full(shape, float("nan") if dtype.is_floating_point else -1, dtype=dtype,
                       device=device)
        outs.append(testing.with_layout(t, layout) if info["layout"] == "strided" else t)
    return outs


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "inner-swapped"])
@pytest.mark.parametrize("op_name,call", _calls())
def test_every_output_element_is_written(op_name, call, layout):
    # Fresh torch.empty memory often holds an earlier result of the same shape, which hides an
    # element a kernel never writes; a buffer of NaN does not (the gate poisons memory likewise).
    spec = _spec(op_name)
    if not spec.outputs:
        pytest.skip("writes its inputs in place (covered by the value tests)")
    tensors = testing.make_inputs(spec, call.inputs, "cuda")
    op = _op(op_name, call.params)
    outs = _poisoned_outputs(spec, call, "cuda", layout)
    op.run_into(outs, *tensors)
    torch.cuda.synchronize()
    _check(spec, outs, _want(op, tensors))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_softmax_rows_split_over_a_cluster_keep_masked_slices_out(dtype):
    # 128256 columns: each row is cut into 8 slices, one per CTA of a cluster. Slices that are
    # entirely -inf must add nothing to the row's sum; a row of all -inf gives NaN, like torch.
    from tileops.ops import SoftmaxFwdOp

    torch.manual_seed(0)
    x = torch.randn(5, 128256, device="cuda", dtype=dtype) * 4
    x[0, :100000] = -float("inf")  # the first six slices masked
    x[1, 5000:] = -float("inf")  # only part of the first slice live
    x[2, :] = -float("inf")
    x[3, ::3] = -float("inf")
    got = SoftmaxFwdOp()(x)
    torch.cuda.synchronize()
    assert torch.isnan(got[2]).all()
    keep = [0, 1, 3, 4]
    rtol, atol = testing.tolerance(_spec("SoftmaxFwdOp"), dtype)
    torch.testing.assert_close(got[keep].double(), torch.softmax(x[keep].double(), -1),
                               rtol=rtol, atol=atol)


@pytest.mark.gpu
@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_tuned_configs_agree_and_persist(op_name, tmp_path, monkeypatch):
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    tune.forget()
    spec = _spec(op_name)
    base = testing.base_call(spec)
    tensors = testing.make_inputs(spec, base.inputs, "cuda")
    op = _op(op_name, base.params).request_tune()
    want = _want(op, tensors)
    _check(spec, _run(op, tensors), want)
    assert len(op.chosen_configs()) == 1
    files = list((tmp_path / "tileops" / "tune").glob("*.json"))
    assert len(files) == 1
    entries = json.loads(files[0].read_text())["entries"]
    assert list(entries) == list(op.chosen_configs())
    # A fresh instance (another process) takes the choice from disk without tuning again.
    tune.forget()
    again = _op(op_name, base.params).request_tune()
    again._autotune = None  # would raise if called
    fresh = testing.make_inputs(spec, base.inputs, "cuda")
    _check(spec, _run(again, fresh), want)


@pytest.mark.gpu
def test_tuning_on_a_full_device_times_with_a_warm_l2(tmp_path, monkeypatch):
    # The tuner's 256 MiB flush buffer may not fit beside a user's tensors: tuning still picks a
    # config (timed with the L2 warm) and says so, rather than failing the call.
    from tileops import timing

    def no_room(device=None):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory (test)")

    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(timing, "flush_buffer", no_room)
    tune.forget()
    x = torch.randn(64, 1024, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
    op = _op("RMSNormFwdOp", {"eps": 1e-6}).request_tune()
    with pytest.warns(UserWarning, match="no room on the device for the 256 MiB L2 flush"):
        y = op(x, w)
    _check(op.spec, [y], _want(op, [x, w]))
    assert list(op.chosen_configs().values())[0] >= 0


def _forced_config(op_name, params, tensors, cfg):
    """An op instance that runs kernel config `cfg` on these tensors: the choice is put in the
    tune cache, as a tuned op would find it."""
    from tileops.op import device_name, tune_version

    tune.forget()
    op = _op(op_name, params).request_tune()
    tune.cache_for(device_name(tensors[0].device), tune_version()).put(
        op.tune_key(tensors), cfg, 1.0, {cfg: 1.0})
    return op


def _config_calls(spec):
    """The entry's `cases:` (the kernel's paths), with every combination of its bool params."""
    flags = testing.bool_params(spec)
    out = []
    for c in testing.contract_calls(spec):
        if c.kind != "case":
            continue
        for combo in itertools.product((False, True), repeat=len(flags)):
            flipped = testing.with_params(spec, c, dict(zip(flags, combo)))
            if flipped is not None:
                out.append(flipped)
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["contiguous", "padded", "permuted", "inner-swapped"])
@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_every_config_that_serves_a_call_matches_the_reference(op_name, layout, tmp_path,
                                                               monkeypatch):
    # Each config is forced through the tune cache (what a tuned op would run). A config that
    # does not serve a call says so with a launch error; every call is served by at least one.
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    spec = _spec(op_name)
    configs = _kernels.num_configs(ops.get(op_name).kernel)
    launch_error = _kernels.launch_error_type()
    calls = _config_calls(spec)
    assert calls, f"{op_name}: the entry has no cases: rows"
    for call in calls:
        tensors = testing.layout_inputs(spec, testing.make_inputs(spec, call.inputs, "cuda"),
                                        layout)
        want = _want(_op(op_name, call.params), tensors)
        served = 0
        for cfg in range(configs):
            fresh = [None if t is None else t.clone() for t in tensors]
            fresh = testing.layout_inputs(spec, fresh, layout)
            try:
                got = _run(_forced_config(op_name, call.params, fresh, cfg), fresh)
            except launch_error:
                continue
            torch.cuda.synchronize()
            _check(spec, got, want)
            served += 1
        assert served >= 1, f"{op_name} {call.id()}: no config serves it"


@pytest.mark.gpu
@pytest.mark.parametrize("tuned", [False, True])
@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_cuda_graph_capture_and_replay(op_name, tuned, tmp_path, monkeypatch):
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    tune.forget()
    spec = _spec(op_name)
    base = testing.base_call(spec)
    static = testing.make_inputs(spec, base.inputs, "cuda", seed=1)
    op = _op(op_name, base.params)
    if tuned:
        op.request_tune()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up (and tuning) outside the capture
        _run(op, [None if t is None else t.clone() for t in static])
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = _run(op, static)
    for seed in (2, 3):
        new = testing.make_inputs(spec, base.inputs, "cuda", seed=seed)
        for s, n in zip(static, new):
            if s is not None:
                s.copy_(n)
        want = _want(op, new)
        graph.replay()
        torch.cuda.synchronize()
        _check(spec, outs, want)


@pytest.mark.gpu
@pytest.mark.parametrize("op_name", IMPLEMENTED)
def test_torch_compile_fullgraph_on_cuda(op_name):
    spec = _spec(op_name)
    base = testing.base_call(spec)
    tensors = testing.make_inputs(spec, base.inputs, "cuda")
    op = _op(op_name, base.params)
    want = _want(op, tensors)
    mutated = [i for i, info in enumerate(spec.inputs) if info["mutated"]]
    in_place = not spec.outputs

    def call(*ts):  # only the op inside the compiled region (spec objects are C++)
        out = op(*ts)
        return [ts[i] for i in mutated] if in_place else out

    torch._dynamo.reset()
    compiled = torch.compile(call, fullgraph=True)
    got = compiled(*tensors)
    got = [got] if isinstance(got, torch.Tensor) else list(got)
    torch.cuda.synchronize()
    _check(spec, got, want)


@pytest.mark.gpu
def test_tensors_on_two_devices_are_rejected():
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    from tileops.ops import RMSNormFwdOp
    x = torch.randn(4, 8, device="cuda:0")
    w = torch.randn(8, device="cuda:1")
    with pytest.raises(ValueError, match="weight is on cuda:1 but x is on cuda:0"):
        RMSNormFwdOp()(x, w)
