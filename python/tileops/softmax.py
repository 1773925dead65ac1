"""Softmax over the last dim: SoftmaxFwdOp (specs/reduction.yaml)."""

from __future__ import annotations

import torch

from .norm import row_view
from .op import KERNEL_DTYPE_CODES, Op
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

    def _launch(self, call, tensors, outs, config, stream):
        (x,) = tensors
        (y,) = outs
        x, rows, xs = row_view(x)
        n = x.shape[-1]
        self._launcher(x.data_ptr(), y.data_ptr(), rows, n, xs, n, KERNEL_DTYPE_CODES[x.dtype],
                       config, stream)
