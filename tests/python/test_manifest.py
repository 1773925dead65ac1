"""The Python face of the spec system: the same C++ parser and binder, reached from torch code."""

import shutil
import subprocess
import sys

import pytest
import torch

from tileops import _core
from tileops import manifest, registry


def test_manifest_has_the_seven_ops():
    names = {o.name for o in manifest.load().ops}
    assert names == {"GEMMFwdOp", "RMSNormFwdOp", "LayerNormFwdOp", "SoftmaxFwdOp",
                     "SiluAndMulFwdOp", "RoPENeoXFwdOp", "MultiHeadAttentionFwdOp"}
    registry.load_builtin_ops()
    for o in manifest.load().ops:
        assert o.status == "implemented"
        assert registry.get(o.name) is not None, o.name
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
    assert "7 ops" in ok.stdout
    show = _run_cli("show", "GEMMFwdOp")
    assert show.returncode == 0
    assert "square-1k" in show.stdout and "compute" in show.stdout
    missing = _run_cli("show", "NoSuchOp")
    assert missing.returncode == 1 and "no op named" in missing.stderr


def test_cli_validate_rejects_broken_copy_with_locations(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(manifest.specs_dir(), specs)
    gemm = (specs / "gemm.yaml").read_text()
    gemm = gemm.replace('shape: "Mat[trans_b, K, N]"', 'shape: "Mat[trans_b, K]"')
    gemm = gemm.replace("{M: 16, N: 6144, K: 4096,", "{M: 16, N: 6144, K: -4,")
    (specs / "gemm.yaml").write_text(gemm)
    r = _run_cli("--specs", str(specs), "validate")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert any(l.startswith(f"{specs}/gemm.yaml:") and "Mat takes 3 arguments" in l for l in lines), r.stderr
    assert any("K: expected a non-negative integer" in l for l in lines), r.stderr
    # An implemented entry needs a registered implementation.
    unregistered = "\n".join(_core.validate_manifest(str(specs), [])["problems"])
    assert (f"{specs}/norm.yaml:2:1: RMSNormFwdOp: status is implemented but no implementation"
            in unregistered), unregistered


def test_registry_must_match_the_spec(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(manifest.specs_dir(), specs)
    reduction = (specs / "reduction.yaml").read_text()
    (specs / "reduction.yaml").write_text(reduction.replace("status: implemented", "status: spec-only"))
    reg = [{"name": "SoftmaxFwdOp", "inputs": ["x"], "outputs": ["out"], "params": [("dim", "-1")],
            "kernels": ["softmax_rows"]},
           {"name": "GeluFwdOp", "inputs": ["x"], "outputs": ["y"], "params": [], "kernels": []}]
    report = _core.validate_manifest(str(specs), reg)
    problems = "\n".join(report["problems"])
    assert "SoftmaxFwdOp: an implementation is registered but the status is spec-only" in problems
    assert "SoftmaxFwdOp: the implementation returns (out) but the spec declares (y)" in problems
    assert "SoftmaxFwdOp: the implementation's params (dim = -1) differ from the spec's ()" in problems
    assert ("SoftmaxFwdOp: registered kernels (softmax_rows) differ from the spec's kernels list "
            "(softmax)") in problems
    assert "GeluFwdOp: an implementation is registered but no spec entry declares it" in problems


def test_registry_is_read_from_the_classes_signatures():
    """What the validator compares is the real call signature: forward's parameters in order,
    __init__'s params with their defaults."""
    registry.load_builtin_ops()
    names = {e["name"] for e in registry.entries()}
    assert names == {o.name for o in manifest.load().ops if o.status == "implemented"}
    from tileops.norm import LayerNormFwdOp

    assert registry.entry(LayerNormFwdOp) == {
        "name": "LayerNormFwdOp", "inputs": ["x", "weight", "bias"], "outputs": ["y"],
        "params": [("eps", "1e-05")], "kernels": ["layer_norm"]}

    class LayerNormFwdOpDrifted(LayerNormFwdOp):  # bias before weight, another eps default
        def __init__(self, eps: float = 1e-6):
            super().__init__(eps=eps)

        def forward(self, x, bias=None, weight=None):
            return self._run(x, weight, bias)

    drifted = registry.register(kernels=["layer_norm"])(LayerNormFwdOpDrifted)
    try:
        e = registry.entry(drifted)
        e["name"] = "LayerNormFwdOp"
        others = [x for x in registry.entries() if x["name"] not in ("LayerNormFwdOp",
                                                                    "LayerNormFwdOpDrifted")]
        problems = "\n".join(_core.validate_manifest(str(manifest.specs_dir()), others + [e])["problems"])
    finally:
        registry._REGISTRY.pop("LayerNormFwdOpDrifted")
    assert ("LayerNormFwdOp: the implementation takes inputs (x, bias, weight) but the spec "
            "declares (x, weight, bias)") in problems
    assert ("LayerNormFwdOp: the implementation's params (eps = 1e-06) differ from the spec's "
            "(eps = 1e-05)") in problems


def test_validate_reports_kernels_missing_from_the_build():
    from tileops.cli import kernel_problems

    entries = [{"name": "GEMMFwdOp", "kernels": ["gemm"]}, {"name": "SoftmaxFwdOp", "kernels": ["softmax"]}]
    assert kernel_problems(entries, None) == []  # _tskernels not built: nothing to compare
    assert kernel_problems(entries, {"softmax": "SoftmaxFwdOp", "gemm": "GEMMFwdOp"}) == []
    assert kernel_problems(entries, {"softmax": "SoftmaxFwdOp"}) == [
        "GEMMFwdOp: kernel 'gemm' is registered but not built into _tskernels (built: softmax)"]
