"""Softmax over the last dim: SoftmaxFwdOp (specs/reduction.yaml)."""

from __future__ import annotations

import torch

from .op import Op
from .registry import register


@register(kernels=["softmax"])
class SoftmaxFwdOp(Op):
    """y = softmax(x, -1), max-subtracted, fp32 accumulation.   x, y [*B, N]"""

    kernel = "softmax"
    outputs = ("y",)

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._run(x)
