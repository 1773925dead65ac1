"""MobileNet-style depthwise-separable conv: depthwise 3x3 + BN + Hardswish + pointwise 1x1."""
import torch
import torch.nn as nn

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.dw = nn.Conv2d(c_in, c_in, 3, padding=1, groups=c_in, bias=False)
        self.bn = nn.BatchNorm2d(c_in)
        self.pw = nn.Conv2d(c_in, c_out, 1)
        self.eval()

    def forward(self, x):
        return self.pw(nn.functional.hardswish(self.bn(self.dw(x))))


def get_inputs():
    return [torch.randn(32, 96, 56, 56)]


def get_init_inputs():
    return [96, 192]
