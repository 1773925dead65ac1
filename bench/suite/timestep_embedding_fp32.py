"""Diffusion timestep embedding: sinusoidal features of t, then Linear-SiLU-Linear (launch bound)."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, freq_dim: int, hidden: int):
        super().__init__()
        half = freq_dim // 2
        self.register_buffer(
            "freqs", torch.exp(-math.log(10000.0) * torch.arange(half).float() / half),
            persistent=False)
        self.mlp = nn.Sequential(nn.Linear(freq_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))

    def forward(self, t):
        args = t[:, None].float() * self.freqs[None]
        return self.mlp(torch.cat([torch.cos(args), torch.sin(args)], dim=-1))


def get_inputs():
    return [torch.rand(16) * 1000]


def get_init_inputs():
    return [256, 1024]
