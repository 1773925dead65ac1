"""References a spec names by path (`reference: tileops.references:<name>`), for computations one
expression cannot say. Each is called with the op's inputs and params by name and returns the
outputs, or an in-place op's written inputs' new values, in the inputs' dtype (fp64 inputs give
fp64 results). Only the contract tests and the benchmarks call them, never the op layer.
"""

from __future__ import annotations

import torch


def rope_neox(positions, q, k, cos_sin_cache):
    """(q, k) rotated NeoX-style: within the first R dims, element i pairs with i + R/2. A
    position outside [0, P) leaves its token as it was."""
    p, r = cos_sin_cache.shape
    half = r // 2
    inside = (positions >= 0) & (positions < p)
    rows = positions.clamp(0, max(p - 1, 0))
    cache = cos_sin_cache.to(torch.promote_types(q.dtype, torch.float32))
    if p == 0:
        cache = torch.zeros(1, r, dtype=cache.dtype, device=cache.device)
    cos = torch.where(inside[:, None], cache[rows, :half], 1.0).unsqueeze(1)  # [S, 1, R/2]
    sin = torch.where(inside[:, None], cache[rows, half:], 0.0).unsqueeze(1)

    def rotate(t):
        x1, x2 = t[..., :half].to(cos.dtype), t[..., half:r].to(cos.dtype)
        rotated = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(t.dtype)
        return torch.cat([rotated, t[..., r:]], dim=-1)

    return rotate(q), rotate(k)
