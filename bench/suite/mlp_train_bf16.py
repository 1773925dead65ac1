"""Training step of a GELU MLP block (forward + backward), 2048 tokens, d=1024."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16
TRAIN = True


class Model(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_model)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(x)))


def loss(out):
    return out.float().pow(2).mean()


def get_inputs():
    return [torch.randn(8, 256, 1024)]


def get_init_inputs():
    return [1024, 4096]
