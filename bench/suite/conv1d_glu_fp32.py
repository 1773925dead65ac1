"""Audio/TTS conv block: Conv1d (k=5) + GLU + residual + LayerNorm over channels, (16, 256, 1024)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int, kernel: int):
        super().__init__()
        self.conv = nn.Conv1d(channels, 2 * channels, kernel, padding=kernel // 2)
        self.norm = nn.LayerNorm(channels)

    def forward(self, x):
        y = F.glu(self.conv(x), dim=1) + x
        return self.norm(y.transpose(1, 2)).transpose(1, 2)


def get_inputs():
    return [torch.randn(16, 256, 1024)]


def get_init_inputs():
    return [256, 5]
