"""Masked, scaled softmax over attention scores (16, 12, 256, 256) with an additive padding mask."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, scores, mask):
        return torch.softmax(scores * self.scale + mask[:, None, None, :], dim=-1)


def get_inputs():
    mask = torch.zeros(16, 256)
    mask[:, 200:] = -10000.0
    return [torch.randn(16, 12, 256, 256), mask]


def get_init_inputs():
    return [0.125]
