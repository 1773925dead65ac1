"""Op.eval_roofline(): the spec's roofline for one checked call, on the CPU (no kernel runs)."""
import pytest
import torch

import tileops
from tileops import manifest
from tileops.ops import GEMMFwdOp
from tileops.ops import RMSNormFwdOp


def test_a_memory_bound_call_reports_its_bytes_and_speed_of_light():
    x = torch.empty(16, 4096, dtype=torch.bfloat16, device="meta")
    w = torch.empty(4096, dtype=torch.bfloat16, device="meta")
    r = RMSNormFwdOp(eps=1e-6).eval_roofline(x, w, profile="h100")
    assert r["profile"] == "h100" and r["bound"] == "memory"
    assert r["bytes"] == 2 * (16 * 4096 * 2) + 4096 * 2  # x read, y written, weight read once
    assert r["intensity"] == pytest.approx(r["flops"] / r["bytes"])
    assert r["sol_seconds"] == pytest.approx(r["bytes"] / r["bandwidth"])


def test_a_compute_bound_call_and_the_profiles_differ_only_in_their_peaks():
    a = torch.empty(4096, 4096, dtype=torch.bfloat16, device="meta")
    b = torch.empty(4096, 4096, dtype=torch.bfloat16, device="meta")
    h100 = GEMMFwdOp().eval_roofline(a, b, profile="h100")
    h200 = GEMMFwdOp().eval_roofline(a, b, profile="h200")
    assert h100["bound"] == h200["bound"] == "compute"
    assert h100["flops"] == h200["flops"] == 2 * 4096**3
    assert h100["sol_seconds"] == pytest.approx(h100["flops"] / h100["peak_flops"])
    assert h100["bandwidth"] < h200["bandwidth"]


def test_the_call_is_checked_first():
    a = torch.empty(64, 32, dtype=torch.bfloat16)
    b = torch.empty(64, 48, dtype=torch.bfloat16)  # K mismatch for d = a @ b.T
    with pytest.raises(tileops.BindError):
        GEMMFwdOp().eval_roofline(a, b)


def test_the_default_profile_is_the_gpu_the_tensors_are_on():
    assert manifest.hardware_profile_for("NVIDIA H100 80GB HBM3") == "h100"
    assert manifest.hardware_profile_for("NVIDIA H200") == "h200"
    assert manifest.hardware_profile_for(None) == "h200"
    x = torch.empty(2, 64, dtype=torch.float32)
    w = torch.empty(64, dtype=torch.float32)
    expected = "h200" if not torch.cuda.is_available() else manifest.hardware_profile_for(
        torch.cuda.get_device_name())
    assert RMSNormFwdOp(eps=1e-6).eval_roofline(x, w)["profile"] == expected
