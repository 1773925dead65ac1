"""The op layer's own pieces on the CPU: row views, torch.library schemas, errors before launch."""

import pytest
import torch

from tileops import KernelsNotBuilt, _kernels, manifest
from tileops.op import custom_op_schema, rows_of



@pytest.mark.parametrize("make,expected", [
    (lambda: torch.empty(4, 8), (4, 8)),
    (lambda: torch.empty(8), (1, 8)),
    (lambda: torch.empty(2, 3, 8), (6, 8)),
    (lambda: torch.empty(4, 12)[:, :8], (4, 12)),                 # padded rows
    (lambda: torch.empty(2, 3, 12)[:, :, :8], (6, 12)),           # padded rows, two batch dims
    (lambda: torch.empty(3, 2, 8).transpose(0, 1), None),         # batch dims swapped: no stride
    (lambda: torch.empty(1, 5, 8)[:, ::2], (3, 16)),              # size-1 dims do not matter
    (lambda: torch.empty(0, 8), (0, 8)),
])
def test_rows_of(make, expected):
    assert rows_of(make()) == expected


def test_custom_op_schemas_follow_the_specs():
    schemas = {o.name: custom_op_schema(o) for o in manifest.load().ops}
    assert schemas["RMSNormFwdOp"] == "RMSNormFwdOp(Tensor x, Tensor weight, float eps, str key) -> Tensor"
    assert schemas["LayerNormFwdOp"] == ("LayerNormFwdOp(Tensor x, Tensor? weight, Tensor? bias, "
                                         "float eps, str key) -> Tensor")
    assert schemas["RoPENeoXFwdOp"] == ("RoPENeoXFwdOp(Tensor positions, Tensor(a!) q, Tensor(b!) k, "
                                        "Tensor cos_sin_cache, str key) -> ()")
    assert schemas["MultiHeadAttentionFwdOp"] == (
        "MultiHeadAttentionFwdOp(Tensor q, Tensor k, Tensor v, bool is_causal, float? scale, "
        "str key) -> Tensor")
    assert schemas["GEMMFwdOp"] == ("GEMMFwdOp(Tensor a, Tensor b, bool trans_a, bool trans_b, "
                                    "str key) -> Tensor")


def test_non_tensor_inputs_are_a_type_error():
    from tileops.ops import SoftmaxFwdOp

    with pytest.raises(TypeError, match=r"SoftmaxFwdOp: x: expected a torch.Tensor or None, got list"):
        SoftmaxFwdOp()([1.0, 2.0])


def test_a_kernel_missing_from_the_build_is_a_clear_error(monkeypatch):
    from tileops.ops import GEMMFwdOp

    monkeypatch.setattr(_kernels, "_module",
                        lambda: ImportError("No module named 'tileops._tskernels'"))
    a = torch.empty(4, 8, dtype=torch.bfloat16)
    # It says what is missing and what to install.
    with pytest.raises(KernelsNotBuilt, match=r"GEMMFwdOp: this tileops was built without its "
                       r"CUDA kernels .*Install the CUDA toolkit .*pip install"):
        GEMMFwdOp()(a, a)


def test_params_are_the_specs_in_order_with_defaults():
    from tileops.ops import MultiHeadAttentionFwdOp

    op = MultiHeadAttentionFwdOp()
    assert op.param_values == {"is_causal": False, "scale": None}
    assert [p["name"] for p in op.spec.params] == list(op.param_values)
    assert repr(MultiHeadAttentionFwdOp(is_causal=True)) == (
        "MultiHeadAttentionFwdOp(is_causal=True, scale=None)")


def test_run_into_writes_the_callers_buffers_and_refuses_what_it_cannot_write():
    from tileops.ops import MultiHeadAttentionFwdOp
    from tileops.ops import RMSNormFwdOp

    norm = RMSNormFwdOp(eps=1e-6)
    x, w = torch.randn(6, 32), torch.randn(32)
    with _kernels.use_reference_backend():
        y = torch.empty(6, 32)
        norm.run_into((y,), x, w)
        torch.testing.assert_close(y, torch.nn.functional.rms_norm(x, (32,), w, 1e-6))
        for bad, why in [(torch.empty(6, 31), "needs float32"),
                         (torch.empty(6, 32, dtype=torch.float64), "needs float32"),
                         (torch.empty(32, 6).t(), "must be contiguous"),
                         (x, "overlaps input x")]:
            with pytest.raises(ValueError, match=why):
                norm.run_into((bad,), x, w)
        with pytest.raises(ValueError, match="0 output tensors given, the spec declares 1"):
            norm.run_into((), x, w)
        # Attention writes through o's strides: SDPA backends' [B, S, H, D] memory layout.
        q, k, v = (torch.randn(1, 2, 8, 64, dtype=torch.bfloat16) for _ in range(3))
        o = torch.empty(1, 8, 2, 64, dtype=torch.bfloat16).transpose(1, 2)
        MultiHeadAttentionFwdOp(is_causal=True).run_into((o,), q, k, v)
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                               is_causal=True)
        torch.testing.assert_close(o.float(), ref, rtol=2e-2, atol=2e-2)
        broadcast = torch.empty(1, 2, 1, 64, dtype=torch.bfloat16).expand(1, 2, 8, 64)
        with pytest.raises(ValueError, match="overlapping elements"):
            MultiHeadAttentionFwdOp().run_into((broadcast,), q, k, v)
