"""Attention: MultiHeadAttentionFwdOp (specs/attention.yaml), SDPA layout, grouped-query heads.

Needs the `attention` launcher (kernels/attention/attention.hpp); an installation built without
it raises tileops.KernelsNotBuilt on the first call (binding and shape inference still work).
"""

from __future__ import annotations

import torch

from .op import KERNEL_DTYPE_CODES, Op, sdpa_scale
from .registry import register


@register(kernels=["attention"])
class MultiHeadAttentionFwdOp(Op):
    """o = softmax(q k^T * scale [+ top-left causal mask]) v.   q [B, Hq, Sq, D],
    k, v [B, Hkv, Skv, D], Hq a multiple of Hkv; scale defaults to 1 / sqrt(D)."""

    kernel = "attention"
    outputs = ("o",)
    strided_outputs = True  # the launcher takes o's strides (SDPA backends' [B, S, H, D] too)

    def __init__(self, is_causal: bool = False, scale: float | None = None):
        super().__init__(is_causal=is_causal, scale=scale)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return self._run(q, k, v)

    def _launch(self, call, tensors, outs, config, stream):
        q, k, v = tensors
        (o,) = outs
        b, hq, sq, d = q.shape
        hkv, skv = k.shape[1], k.shape[2]
        if o.numel() == 0:
            return
        self._launcher(q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), b, hq, hkv, sq, skv,
                       d, list(q.stride()), list(k.stride()), list(v.stride()), list(o.stride()),
                       float(sdpa_scale(self.param_values["scale"], d)),
                       bool(self.param_values["is_causal"]), KERNEL_DTYPE_CODES[q.dtype], config,
                       stream)
