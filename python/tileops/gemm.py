"""Dense matrix products: GEMMFwdOp (specs/gemm.yaml).

Needs the `gemm` launcher (kernels/gemm/gemm.hpp); an installation built without it raises
tileops.KernelsNotBuilt on the first call (binding and shape inference still work).
"""

from __future__ import annotations

import torch

from .op import Op
from .registry import register


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
