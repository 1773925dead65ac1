"""The worker's memory poisoning (S1, S2): the caching allocator's free blocks filled with garbage
before each candidate call, and the reference's outputs overwritten before they are freed, so a
candidate that reads memory it never wrote sees garbage instead of the right answer.
"""

from __future__ import annotations

import torch


class Poisoner:
    """Fills the allocator's free blocks with garbage before each candidate call, so a candidate
    that reads memory it never wrote (the reference's freed output, uninitialized scratch) sees
    NaN (0xFF) on one run and huge finite values (0x7F) on the repeat."""

    def __init__(self, device: torch.device, max_bytes: int):
        self.device = device
        self.sizes = []
        s = 512
        top = max(2 * max_bytes, 1 << 20)
        while s <= top:
            self.sizes.append(s)
            s *= 2

    def poison(self, byte: int) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        blocks = []
        for s in self.sizes:
            for _ in range(2 if s < (1 << 20) else 1):  # small blocks share segments: two each
                b = torch.empty(s, dtype=torch.uint8, device=self.device)
                b.fill_(byte)
                blocks.append(b)
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        del blocks  # back into the caching allocator's free lists, still holding the poison


def _scrub(tensors) -> None:
    """Overwrites the reference's outputs in place before they are freed."""
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.untyped_storage().nbytes():
            torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage()).fill_(0xFF)
