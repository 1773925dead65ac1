"""Rotary position embeddings: RoPENeoXFwdOp (specs/rope.yaml), in place on q and k."""

from __future__ import annotations

import torch

from .op import Op
from .registry import register


@register(kernels=["rope_neox"])
class RoPENeoXFwdOp(Op):
    """NeoX-style rotary embedding, in place (as vLLM's rotary_embedding):

    positions [S] int64, q [S, Hq, D], k [S, Hk, D], cos_sin_cache [P, R] fp32 (row p: the R/2
    cos values, then the R/2 sin values). Returns (q, k), rotated in place. A position outside
    [0, P) leaves its token unrotated (the kernel cannot read positions without a sync)."""

    kernel = "rope_neox"
    outputs = ()
    collapse_rows = False  # the kernel takes token and head strides; q and k are written

    def __init__(self):
        super().__init__()

    def forward(self, positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                cos_sin_cache: torch.Tensor):
        self._run(positions, q, k, cos_sin_cache)
        return q, k
