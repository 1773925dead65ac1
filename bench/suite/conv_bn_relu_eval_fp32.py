"""Conv2d 3x3 + BatchNorm2d (eval) + ReLU, ResNet stage 2 shape: (32, 64, 56, 56) -> 128 ch."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.eval()

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(32, 64, 56, 56)]


def get_init_inputs():
    return [64, 128]
