"""Gated activations: SiluAndMulFwdOp (specs/activation.yaml)."""

from __future__ import annotations

import torch

from .norm import row_view
from .op import KERNEL_DTYPE_CODES, Op
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

    def _launch(self, call, tensors, outs, config, stream):
        (x,) = tensors
        (y,) = outs
        x, rows, xs = row_view(x)
        n = y.shape[-1]
        self._launcher(x.data_ptr(), y.data_ptr(), rows, n, xs, n, KERNEL_DTYPE_CODES[x.dtype],
                       config, stream)
