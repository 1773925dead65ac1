"""Tiny 4-layer MLP (batch 64, width 256): dominated by launch overhead, like RL policy nets."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_in: int, width: int, d_out: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, width), nn.ReLU(),
            nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, width), nn.ReLU(),
            nn.Linear(width, d_out), nn.Tanh(),
        )

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(64, 128)]


def get_init_inputs():
    return [128, 256, 16]
