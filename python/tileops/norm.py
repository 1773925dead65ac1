"""Normalizations over the last dim: RMSNormFwdOp, LayerNormFwdOp (specs/norm.yaml)."""

from __future__ import annotations

import torch

from .op import Op
from .registry import register


@register(kernels=["rms_norm"])
class RMSNormFwdOp(Op):
    """y = x / sqrt(mean(x^2, -1) + eps) * weight, fp32 accumulation.   x [*B, N], weight [N]"""

    kernel = "rms_norm"
    outputs = ("y",)

    def __init__(self, eps: float = 1e-6):
        super().__init__(eps=eps)

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return self._run(x, weight)


@register(kernels=["layer_norm"])
class LayerNormFwdOp(Op):
    """y = (x - mean) / sqrt(var + eps) * weight + bias (biased var); weight, bias optional."""

    kernel = "layer_norm"
    outputs = ("y",)

    def __init__(self, eps: float = 1e-5):
        super().__init__(eps=eps)

    def forward(self, x: torch.Tensor, weight: torch.Tensor | None = None,
                bias: torch.Tensor | None = None) -> torch.Tensor:
        return self._run(x, weight, bias)
