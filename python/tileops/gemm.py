"""Dense matrix products: GEMMFwdOp (specs/gemm.yaml).

Needs the `gemm` launcher (kernels/gemm/gemm.hpp); an installation built without it raises
tileops.KernelsNotBuilt on the first call (binding and shape inference still work).
"""

from __future__ import annotations

import torch

from .op import KERNEL_DTYPE_CODES, Op
from .registry import register


def _leading_dim(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """(t, row stride) of a stored matrix whose last dim is contiguous (the spec's `rows` layout).
    A single row's stride is meaningless (use the row length); broadcast rows (stride below the
    row length, which the launcher refuses) are copied."""
    rows, cols = t.shape
    if rows <= 1:
        return t, max(cols, 1)
    if t.stride(0) < cols:
        t = t.contiguous()
    return t, t.stride(0)


@register(kernels=["gemm"])
class GEMMFwdOp(Op):
    """d = op(a) @ op(b), fp32 accumulation. a is [M, K] ([K, M] when trans_a); b is [N, K] by
    default (trans_b: d = a @ b.T, as nn.Linear stores weights), [K, N] when trans_b is False."""

    kernel = "gemm"
    outputs = ("d",)

    def __init__(self, trans_a: bool = False, trans_b: bool = True):
        super().__init__(trans_a=trans_a, trans_b=trans_b)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return self._run(a, b)

    def _launch(self, call, tensors, outs, config, stream):
        a, b = tensors
        (d,) = outs
        m, n = d.shape
        k = a.shape[0] if self.param_values["trans_a"] else a.shape[1]
        if m == 0 or n == 0:
            return
        if k == 0:
            d.zero_()  # an empty sum
            return
        a, lda = _leading_dim(a)
        b, ldb = _leading_dim(b)
        self._launcher(a.data_ptr(), b.data_ptr(), d.data_ptr(), m, n, k, lda, ldb, n, bool(self.param_values["trans_a"]),
                       bool(self.param_values["trans_b"]), KERNEL_DTYPE_CODES[a.dtype], config,
                       stream)
