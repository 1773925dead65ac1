"""GroupNorm(32) + SiLU on a UNet feature map (16, 256, 32, 32)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return torch.nn.functional.silu(self.norm(x))


def get_inputs():
    return [torch.randn(16, 256, 32, 32)]


def get_init_inputs():
    return [32, 256]
