"""The Python face of the spec system: the same C++ parser and binder, reached from torch code."""

import shutil
import subprocess
import sys

import pytest
import torch

import _tscore
from tileops import manifest, registry


def test_manifest_has_the_seven_ops():
    names = {o.name for o in manifest.load().ops}
    assert names == {"GEMMFwdOp", "RMSNormFwdOp", "LayerNormFwdOp", "SoftmaxFwdOp",
                     "SiluAndMulFwdOp", "RoPENeoXFwdOp", "MultiHeadAttentionFwdOp"}
    for o in manifest.load().ops:
        assert o.status == "spec-only"
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
    h200 = {p["key"]: p for p in _tscore.hardware_profiles()}["h200"]
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
    norm = (specs / "norm.yaml").read_text().replace("status: spec-only", "status: implemented", 1)
    (specs / "norm.yaml").write_text(norm)
    r = _run_cli("--specs", str(specs), "validate")
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert any(l.startswith(f"{specs}/gemm.yaml:") and "Mat takes 3 arguments" in l for l in lines), r.stderr
    assert any("K: expected a non-negative integer" in l for l in lines), r.stderr
    assert any(f"{specs}/norm.yaml:2:1: RMSNormFwdOp: status is implemented but no implementation"
               in l for l in lines), r.stderr


def test_registry_must_match_the_spec(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(manifest.specs_dir(), specs)
    reg = [{"name": "SoftmaxFwdOp", "inputs": ["x"], "outputs": ["out"], "params": [("dim", "-1")],
            "kernels": ["softmax_rows"]},
           {"name": "GeluFwdOp", "inputs": ["x"], "outputs": ["y"], "params": [], "kernels": []}]
    report = _tscore.validate_manifest(str(specs), reg)
    problems = "\n".join(report["problems"])
    assert "SoftmaxFwdOp: an implementation is registered but the status is spec-only" in problems
    assert "SoftmaxFwdOp: the implementation returns (out) but the spec declares (y)" in problems
    assert "SoftmaxFwdOp: the implementation's params (dim = -1) differ from the spec's ()" in problems
    assert "GeluFwdOp: an implementation is registered but no spec entry declares it" in problems
    assert registry.entries() == []
