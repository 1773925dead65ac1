"""Attention: MultiHeadAttentionFwdOp (specs/attention.yaml), SDPA layout, grouped-query heads.

Needs the `attention` launcher (kernels/attention/attention.hpp); an installation built without
it raises tileops.KernelsNotBuilt on the first call (binding and shape inference still work).
"""

from __future__ import annotations

import torch

from .op import Op
from .registry import register


@register(kernels=["attention"])
class MultiHeadAttentionFwdOp(Op):
    """o = softmax(q k^T * scale [+ top-left causal mask]) v.   q [B, Hq, Sq, D],
    k, v [B, Hkv, Skv, D], Hq a multiple of Hkv; scale defaults to 1 / sqrt(D)."""

    kernel = "attention"
    outputs = ("o",)
    strided_outputs = True  # the launcher takes o's strides (SDPA backends' [B, S, H, D] too)
    collapse_rows = False  # and every stride of q, k, v (a fused QKV projection's views)

    def __init__(self, is_causal: bool = False, scale: float | None = None):
        super().__init__(is_causal=is_causal, scale=scale)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self._run(q, k, v)
