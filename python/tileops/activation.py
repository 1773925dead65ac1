"""Gated activations: SiluAndMulFwdOp (specs/activation.yaml)."""

from __future__ import annotations

import torch

from .op import Op
from .registry import register


@register(kernels=["silu_and_mul"])
class SiluAndMulFwdOp(Op):
    """y = silu(x[..., :N]) * x[..., N:].   x [*B, 2N] -> y [*B, N]"""

    kernel = "silu_and_mul"
    outputs = ("y",)

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._run(x)
