"""The Python face of the spec system: the same C++ parser and binder, reached from torch code."""

import shutil
import subprocess
import sys

import pytest
import torch

from tileops import _core
from tileops import manifest, ops


def test_manifest_has_the_first_ops_and_a_class_for_each_implemented_one():
    names = {o.name for o in manifest.load().ops}
    assert names >= {"GEMMFwdOp", "RMSNormFwdOp", "LayerNormFwdOp", "SoftmaxFwdOp",
                     "SiluAndMulFwdOp", "RoPENeoXFwdOp", "MultiHeadAttentionFwdOp"}
    for o in manifest.load().ops:
        if o.status == "implemented":
            assert ops.get(o.name).__name__ == o.name
        assert o.workloads(), o.name


def _arg(t: torch.Tensor):
    return (str(t.dtype), tuple(t.shape), tuple(t.stride()))


def test_bind_torch_tensors_infers_output():
    gemm = manifest.op("GEMMFwdOp")
    a = torch.empty(64, 32, dtype=torch.bfloat16)
    b = torch.empty(128, 32, dtype=torch.bfloat16)
    call = gemm.bind([_arg(a), _arg(b)])
    assert call.outputs == [("bfloat16", (64, 128))]
    assert gemm.dims(call) == {"M": 64, "N": 128, "K": 32, "T": "bfloat16",
                               "trans_a": False, "trans_b": True}
    call = gemm.bind([_arg(a), _arg(torch.empty(32, 128, dtype=torch.bfloat16))], {"trans_b": False})
    assert call.outputs == [("bfloat16", (64, 128))]


def test_bind_errors_are_precise():
    gemm = manifest.op("GEMMFwdOp")
    with pytest.raises(manifest.BindError) as e:
        gemm.bind([("bfloat16", (1024, 512)), ("bfloat16", (1024, 256))])
    assert str(e.value) == ("GEMMFwdOp: b: expected shape [N, K] = [?, 512] (K bound by a), "
                            "got [1024, 256]")
    with pytest.raises(manifest.BindError, match="unknown param 'transpose'"):
        gemm.bind([("bfloat16", (4, 4)), ("bfloat16", (4, 4))], {"transpose": True})
    with pytest.raises(ValueError, match="unknown dtype"):
        gemm.bind([("bfloat17", (4, 4)), ("bfloat16", (4, 4))])
    x = torch.empty(4, 8, dtype=torch.float16).t()  # last dim not contiguous
    with pytest.raises(manifest.BindError, match="must be contiguous in its last dim"):
        manifest.op("RMSNormFwdOp").bind([_arg(x), ("float16", (4,))])


def test_optional_inputs_and_roofline():
    ln = manifest.op("LayerNormFwdOp")
    call = ln.bind([("float32", (8, 64)), None, None])
    r = ln.roofline(call)
    assert (r["flops"], r["bytes"]) == (8 * 8 * 64, 2 * 8 * 64 * 4)
    assert r["bound"] == "memory"
    h200 = {p["key"]: p for p in _core.hardware_profiles()}["h200"]
    assert r["sol_seconds"] == pytest.approx(r["bytes"] / h200["hbm_bandwidth"])


def test_workloads_bind_to_outputs():
    rows = manifest.op("SiluAndMulFwdOp").workloads()
    first = rows[0]
    assert first["label"] == "llama3-8b-prefill"
    assert first["inputs"] == [("bfloat16", (8192, 28672))]
    assert first["bound"].outputs == [("bfloat16", (8192, 14336))]


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tileops.cli", *args], capture_output=True, text=True)


def test_cli_validate_and_show():
    ok = _run_cli("validate")
    assert ok.returncode == 0, ok.stderr
    assert f"{len(manifest.load().ops)} ops" in ok.stdout
    show = _run_cli("show", "GEMMFwdOp")
    assert show.returncode == 0
    assert "square-1k" in show.stdout and "compute" in show.stdout
    missing = _run_cli("show", "NoSuchOp")
    assert missing.returncode == 1 and "no op named" in missing.stderr


def _validate_edited_copy(tmp_path, file: str, edits: dict) -> tuple:
    """`tileops validate` on a copy of the manifest with `edits` (old -> new text) made to
    `file`: (the copy's folder, the lines it printed on stderr); it must fail."""
    specs = tmp_path / "specs"
    shutil.copytree(manifest.specs_dir(), specs)
    text = (specs / file).read_text()
    for old, new in edits.items():
        assert old in text, old
        text = text.replace(old, new)
    (specs / file).write_text(text)
    r = _run_cli("--specs", str(specs), "validate")
    assert r.returncode == 1, r.stdout
    return specs, r.stderr.splitlines()


def test_cli_validate_rejects_broken_copy_with_locations(tmp_path):
    specs, lines = _validate_edited_copy(tmp_path, "gemm.yaml", {
        'shape: "Mat[trans_b, K, N]"': 'shape: "Mat[trans_b, K]"',
        "{M: 16, N: 6144, K: 4096,": "{M: 16, N: 6144, K: -4,"})
    assert any(l.startswith(f"{specs}/gemm.yaml:") and "Mat takes 3 arguments" in l
               for l in lines), lines
    assert any("K: expected a non-negative integer" in l for l in lines), lines
    # An implemented entry needs a registered implementation.
    unregistered = "\n".join(_core.validate_manifest(str(specs), [])["problems"])
    assert (f"{specs}/norm.yaml:2:1: RMSNormFwdOp: status is implemented but no kernel is "
            "registered for it" in unregistered), unregistered


def test_kernel_registry_must_match_the_spec(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(manifest.specs_dir(), specs)
    reduction = (specs / "reduction.yaml").read_text()
    (specs / "reduction.yaml").write_text(reduction.replace("status: implemented", "status: spec-only"))
    reg = [{"name": "SoftmaxFwdOp", "kernels": ["softmax_rows"]},
           {"name": "GeluFwdOp", "kernels": ["gelu"]}]
    report = _core.validate_manifest(str(specs), reg)
    problems = "\n".join(report["problems"])
    assert "SoftmaxFwdOp: a kernel is registered but the status is spec-only" in problems
    assert ("SoftmaxFwdOp: registered kernels (softmax_rows) differ from the spec's kernels list "
            "(softmax)") in problems
    assert "GeluFwdOp: a kernel is registered for it but no spec entry declares it" in problems


def test_op_classes_are_generated_from_the_entries():
    """Each implemented entry's class: its name, __init__ with the spec's params and defaults,
    forward with its inputs (trailing optional ones default to None), its kernel and outputs."""
    import inspect

    assert set(ops.CLASSES) == {o.name for o in manifest.load().ops if o.status == "implemented"}
    ln = ops.LayerNormFwdOp
    assert str(inspect.signature(ln.__init__)) == "(self, eps=1e-05)"
    assert str(inspect.signature(ln.forward)) == "(self, x, weight=None, bias=None)"
    assert (ln.kernel, ln.outputs) == ("layer_norm", ("y",))
    assert ln.__doc__.startswith("y = (x - mean) / sqrt(var + eps)")
    assert str(inspect.signature(ops.GEMMFwdOp.__init__)) == "(self, trans_a=False, trans_b=True)"
    assert str(inspect.signature(ops.MultiHeadAttentionFwdOp.__init__)) == (
        "(self, is_causal=False, scale=None)")
    assert str(inspect.signature(ops.RoPENeoXFwdOp.forward)) == (
        "(self, positions, q, k, cos_sin_cache)")
    import tileops

    assert tileops.RMSNormFwdOp is ops.RMSNormFwdOp
    with pytest.raises(TypeError, match="unexpected keyword argument 'epsilon'"):
        ops.RMSNormFwdOp(epsilon=1e-6)
    with pytest.raises(KeyError, match="no implemented op named 'Nope'"):
        ops.get("Nope")


def test_a_new_entry_becomes_a_class_with_no_code(tmp_path):
    """An entry with a required param after a defaulted one, an optional input in the middle and
    only in-place writes: keyword-only params, the input required, the written inputs returned."""
    import inspect

    text = """
AxpyFwdOp:
  ref_api: torch.add
  family: toy
  status: implemented
  kernels: [axpy]
  reference: "y + alpha * x"
  signature:
    forall: {N: Dim, T: "DType[float32]"}
    params: {alpha: {type: float, default: 1.0}, beta: {type: float}}
    inputs:
      x: {dtype: T, shape: "[N]", optional: true}
      y: {dtype: T, shape: "[N]", mutated: true}
  workloads:
    - {N: 4, label: tiny}
  roofline:
    flops: "2 * N"
"""
    (tmp_path / "toy.yaml").write_text(text)
    spec = manifest.load(tmp_path).find("AxpyFwdOp")
    cls = ops.op_class(spec)
    assert str(inspect.signature(cls.__init__)) == "(self, alpha=1.0, *, beta)"
    assert str(inspect.signature(cls.forward)) == "(self, x, y)"
    keyword = tmp_path / "keyword"
    keyword.mkdir()
    (keyword / "toy.yaml").write_text(text.replace("      x: {", "      lambda: {"))
    with pytest.raises(manifest.SpecError, match="lambda cannot name a param or input"):
        ops.op_class(manifest.load(keyword).find("AxpyFwdOp"))


def test_validate_reports_kernels_missing_from_the_build():
    from tileops.cli import kernel_problems

    reference = {"gemm": "GEMMFwdOp", "softmax": "SoftmaxFwdOp"}
    assert kernel_problems(reference, None) == []  # _tskernels not built: nothing to compare
    assert kernel_problems(reference, {"softmax": "SoftmaxFwdOp", "gemm": "GEMMFwdOp"}) == []
    assert kernel_problems(reference, {"softmax": "SoftmaxFwdOp"}) == [
        "GEMMFwdOp: kernel 'gemm' has a reference but is not built into _tskernels (built: softmax)"]


def test_validate_runs_each_reference_on_a_small_call(tmp_path):
    specs, lines = _validate_edited_copy(tmp_path, "reduction.yaml", {
        'reference: "torch.logsumexp(x, -1)"': 'reference: "torch.exp(x)"',
        'reference: "torch.argmax(x, -1)"': 'reference: "torch.argmax(x, -1, keepdm=True)"'})
    assert any(f"{specs}/reduction.yaml:" in l and "LogSumExpFwdOp: reference on" in l
               and "the signature gives [(16,)]" in l for l in lines), lines
    assert any("ArgMaxFwdOp: reference fails on" in l and "keepdm" in l for l in lines), lines
