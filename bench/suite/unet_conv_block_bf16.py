"""Diffusion UNet resblock: GroupNorm + SiLU + conv3x3, plus a time-embedding bias, (8, 128, 64, 64)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, channels: int, t_dim: int):
        super().__init__()
        self.norm1 = nn.GroupNorm(32, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.t_proj = nn.Linear(t_dim, channels)
        self.norm2 = nn.GroupNorm(32, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x, t_emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.t_proj(F.silu(t_emb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return x + h


def get_inputs():
    return [torch.randn(8, 128, 64, 64), torch.randn(8, 512)]


def get_init_inputs():
    return [128, 512]
