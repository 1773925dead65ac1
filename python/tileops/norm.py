"""Normalizations over the last dim: RMSNormFwdOp, LayerNormFwdOp (specs/norm.yaml)."""

from __future__ import annotations

import torch

from .op import KERNEL_DTYPE_CODES, Op, rows_of
from .registry import register


def row_view(x: torch.Tensor) -> tuple[torch.Tensor, int, int]:
    """(x, rows, row stride) for a kernel over rows of x's last dim. Leading dims that cannot be
    collapsed into one row stride (a rare permuted view) and broadcast rows (stride 0, which the
    launchers refuse) are made contiguous first: the one copy in the launch path."""
    r = rows_of(x)
    if r is None or (r[0] > 1 and r[1] < x.shape[-1]):  # uncollapsible, or broadcast rows
        x = x.contiguous()
        r = rows_of(x)
    return x, r[0], r[1]


@register(kernels=["rms_norm"])
class RMSNormFwdOp(Op):
    """y = x / sqrt(mean(x^2, -1) + eps) * weight, fp32 accumulation.   x [*B, N], weight [N]"""

    kernel = "rms_norm"
    outputs = ("y",)

    def __init__(self, eps: float = 1e-6):
        super().__init__(eps=eps)

    def forward(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        return self._run(x, weight)

    def _launch(self, call, tensors, outs, config, stream):
        x, w = tensors
        (y,) = outs
        x, rows, xs = row_view(x)
        n = x.shape[-1]
        self._launcher(x.data_ptr(), y.data_ptr(), w.data_ptr(), rows, n, xs, n,
                       float(self.param_values["eps"]), KERNEL_DTYPE_CODES[x.dtype], config, stream)


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

    def _launch(self, call, tensors, outs, config, stream):
        x, w, b = tensors
        (y,) = outs
        x, rows, xs = row_view(x)
        n = x.shape[-1]
        self._launcher(x.data_ptr(), y.data_ptr(), 0 if w is None else w.data_ptr(),
                       0 if b is None else b.data_ptr(), rows, n, xs, n,
                       float(self.param_values["eps"]), KERNEL_DTYPE_CODES[x.dtype], config, stream)
