"""The TileOPs calls the search agent pastes into candidates, run on the CPU references.

Each helper must compute what the launch it replaces computes, into that launch's own output
buffer, and run the original launch whenever the op's spec does not cover the call.
"""

import pathlib

import pytest
import torch
import torch.nn.functional as F

from tileops import _kernels

HELPER = pathlib.Path(__file__).resolve().parents[2] / "core/agent/search/tileops_calls.py"


class FakeKernel:
    """An Inductor kernel stand-in: records each original launch."""

    def __init__(self):
        self.runs = []

    def run(self, *args, stream=None):
        self.runs.append((args, stream))


class FakeExtern:
    def __init__(self):
        self.mm_calls = 0

    def mm(self, a, b, out):
        self.mm_calls += 1
        torch.mm(a, b, out=out)


@pytest.fixture
def calls():
    extern = FakeExtern()
    scope = {"torch": torch, "extern_kernels": extern}
    exec(compile(HELPER.read_text(), str(HELPER), "exec"), scope)
    with _kernels.use_reference_backend():
        yield scope["_ts_tileops"], extern


def test_rms_norm_into_the_kernels_buffer_whichever_argument_is_x(calls):
    tileops, _ = calls
    torch.manual_seed(0)
    x, w = torch.randn(4, 8, 64), torch.randn(64)
    out = torch.empty(32, 64)  # Inductor's buffer may be shaped otherwise; same elements
    kernel = FakeKernel()
    tileops.rms_norm(kernel, [w, x, out, 32, 64], 7, ins=(0, 1), out=2, rows=32, n=64, eps=1e-6)
    assert kernel.runs == []
    torch.testing.assert_close(out.view(4, 8, 64), F.rms_norm(x, (64,), w, 1e-6))


def test_uncovered_calls_run_the_original_once_each_and_are_remembered(calls):
    tileops, _ = calls
    x, w = torch.randn(32, 64), torch.randn(64)
    kernel = FakeKernel()
    mixed = torch.empty(32, 64, dtype=torch.bfloat16)  # fp32 in, bf16 out: not the spec's T
    for _ in range(2):
        tileops.rms_norm(kernel, [x, w, mixed, 32, 64], 3, ins=(0, 1), out=2, rows=32, n=64,
                         eps=1e-6)
    assert [r[1] for r in kernel.runs] == [3, 3]
    assert len(tileops.refused) == 1
    # A single row cannot tell x from the weight: the original runs.
    one = torch.empty(1, 64)
    tileops.rms_norm(kernel, [x[:1], w, one, 1, 64], 3, ins=(0, 1), out=2, rows=1, n=64, eps=1e-6)
    assert len(kernel.runs) == 3


def test_layer_norm_and_softmax(calls):
    tileops, _ = calls
    x, w, b = torch.randn(16, 48), torch.randn(48), torch.randn(48)
    out = torch.empty(16, 48)
    kernel = FakeKernel()
    tileops.layer_norm(kernel, [x, w, b, out, 16, 48], 0, ins=(0, 1, 2), out=3, rows=16, n=48,
                       eps=1e-5)
    torch.testing.assert_close(out, F.layer_norm(x, (48,), w, b, 1e-5))
    tileops.softmax(kernel, [x, out, 16, 48], 0, ins=(0,), out=1, rows=16, n=48)
    torch.testing.assert_close(out, torch.softmax(x, -1))
    assert kernel.runs == []


def test_silu_and_mul_reads_gate_then_up_from_one_tensor(calls):
    tileops, _ = calls
    x = torch.randn(6, 2 * 40)
    out = torch.empty(6, 1, 40)
    kernel = FakeKernel()
    tileops.silu_and_mul(kernel, [x, out, 240], 0, ins=(0,), out=1)
    torch.testing.assert_close(out.view(6, 40), F.silu(x[:, :40]) * x[:, 40:])
    assert kernel.runs == []
    tileops.silu_and_mul(kernel, [x[:, :70], out, 240], 0, ins=(0,), out=1)  # not [*, 2N]
    assert len(kernel.runs) == 1


@pytest.mark.parametrize("a_major,b_major", [("row", "col"), ("col", "row"), ("row", "row")])
def test_mm_maps_each_layout_to_the_gemms_transposes(calls, a_major, b_major):
    tileops, extern = calls
    torch.manual_seed(1)
    m, n, k = 24, 40, 32
    a = torch.randn(m, k, dtype=torch.bfloat16)
    b = torch.randn(k, n, dtype=torch.bfloat16)
    if a_major == "col":
        a = a.t().contiguous().t()
    if b_major == "col":  # nn.Linear's weight [N, K] seen as [K, N]
        b = b.t().contiguous().t()
    out = torch.empty(m, n, dtype=torch.bfloat16)
    tileops.mm(a, b, out=out)
    assert extern.mm_calls == 0
    torch.testing.assert_close(out.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-2)


def test_mm_outside_the_gemms_dtypes_runs_the_extern_kernel(calls):
    tileops, extern = calls
    a, b, out = torch.randn(8, 16), torch.randn(16, 4), torch.empty(8, 4)
    tileops.mm(a, b, out=out)
    assert extern.mm_calls == 1
    torch.testing.assert_close(out, a @ b)


def test_attention_in_the_layout_call_asserts_and_falls_back_for_a_mask(calls):
    tileops, _ = calls
    torch.manual_seed(2)
    b, h, s, d = 2, 4, 16, 64
    q, k, v = (torch.randn(b, h, s, d, dtype=torch.bfloat16) for _ in range(3))
    op = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    stride = (s * h * d, d, h * d, 1)  # [B, S, H, D] in memory, as the cuDNN backend writes
    (o,) = tileops.attention((b, h, s, d), stride, op, q, k, v, 0.0, True, scale=0.125)
    assert o.stride() == stride
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True,
                                         scale=0.125)
    torch.testing.assert_close(o.float(), ref, rtol=2e-2, atol=2e-2)
    mask = torch.zeros(s, s, dtype=torch.bfloat16)
    r = tileops.attention((b, h, s, d), stride, op, q, k, v, 0.0, False, attn_mask=mask)
    assert len(r) == 2  # the aten op's own (output, logsumexp): it ran


@pytest.mark.gpu
def test_on_cuda_the_real_kernels_serve_each_call_and_nothing_falls_back():
    extern = FakeExtern()
    scope = {"torch": torch, "extern_kernels": extern}
    exec(compile(HELPER.read_text(), str(HELPER), "exec"), scope)
    tileops = scope["_ts_tileops"]
    dev, bf16 = "cuda", torch.bfloat16
    torch.manual_seed(3)
    kernel = FakeKernel()
    x, w = torch.randn(4, 512, 2048, device=dev, dtype=bf16), torch.randn(2048, device=dev, dtype=bf16)
    y = torch.empty(2048, 2048, device=dev, dtype=bf16)
    tileops.rms_norm(kernel, [w, x, y, 2048, 2048], 0, ins=(0, 1), out=2, rows=2048, n=2048,
                     eps=1e-6)
    torch.testing.assert_close(y.view_as(x).float(), F.rms_norm(x.float(), (2048,), w.float(), 1e-6),
                               rtol=2e-2, atol=2e-2)
    a = torch.randn(2048, 2048, device=dev, dtype=bf16)
    weight = torch.randn(5632, 2048, device=dev, dtype=bf16)  # nn.Linear's [N, K]
    out = torch.empty(2048, 5632, device=dev, dtype=bf16)
    tileops.mm(a, weight.t(), out=out)
    torch.testing.assert_close(out, a @ weight.t(), rtol=2e-2, atol=1.0)
    q, k, v = (torch.randn(4, 16, 512, 64, device=dev, dtype=bf16) for _ in range(3))
    op = torch.ops.aten._scaled_dot_product_flash_attention.default
    stride = (512 * 16 * 64, 64, 16 * 64, 1)
    (o,) = tileops.attention((4, 16, 512, 64), stride, op, q, k, v, 0.0, True)
    torch.testing.assert_close(o, F.scaled_dot_product_attention(q, k, v, is_causal=True),
                               rtol=2e-2, atol=2e-2)
    assert kernel.runs == [] and extern.mm_calls == 0 and not tileops.refused
