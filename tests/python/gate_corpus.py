"""Helpers shared by the gate tests: the adversarial corpus under tests/gate/corpus/ and the
arguments of its base graph."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "gate" / "corpus"


@dataclass(frozen=True)
class Entry:
    name: str  # file stem
    role: str  # "attack" | "honest" | "identical"
    expect: tuple  # accepted kinds ("accepted" for honest)
    needs: str  # "cpu" | "cuda"
    slow: str  # "" or why it is slow (hang)

    @property
    def source(self) -> str:
        return (CORPUS / f"{self.name}.py").read_text()


def _header(text: str, key: str) -> str | None:
    m = re.search(rf"^# {key}:\s*(.*)$", text, re.M)
    return m.group(1).strip() if m else None


def entries() -> list:
    out = []
    for p in sorted(CORPUS.glob("*.py")):
        if p.stem == "base":
            continue
        text = p.read_text()
        role = next(r for r in ("attack", "honest", "identical") if _header(text, r) is not None)
        out.append(Entry(p.stem, role, tuple((_header(text, "expect") or "").split("|")),
                         _header(text, "needs") or "cpu", _header(text, "slow") or ""))
    return out


def base_source() -> str:
    return (CORPUS / "base.py").read_text()


def base_args(M=64, K=256, N=256, device="cpu"):
    """x [M, K]; w [K, N] as a transposed view; b [N] at storage offset 8; running_mean [N]."""
    import torch

    g = torch.Generator().manual_seed(0)
    x = torch.randn(M, K, generator=g)
    wt = torch.randn(N, K, generator=g) / K ** 0.5
    bb = torch.randn(N + 16, generator=g)
    rm = torch.randn(N, generator=g) * 0.1
    return [x.to(device), wt.to(device).t(), bb.to(device)[8:8 + N], rm.to(device)]
