"""LayerNorm followed by GELU on a (4096, 4096) activation (memory bound)."""
import torch
import torch.nn as nn

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return torch.nn.functional.gelu(self.norm(x))


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return [4096]
