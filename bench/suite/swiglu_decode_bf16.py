"""Gated MLP at decode time: 8 tokens through a d=4096 SwiGLU MLP (weight-bandwidth bound)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.gate_up = nn.Linear(d_model, 2 * d_hidden, bias=False)
        self.down = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


def get_inputs():
    return [torch.randn(8, 1, 4096)]


def get_init_inputs():
    return [4096, 11008]
