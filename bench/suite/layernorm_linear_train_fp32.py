"""Training step: LayerNorm -> Linear -> ReLU -> Linear classifier head with cross entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TRAIN = True


class Model(nn.Module):
    def __init__(self, d_in: int, hidden: int, n_classes: int):
        super().__init__()
        self.norm = nn.LayerNorm(d_in)
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)

    def forward(self, x, labels):
        return F.cross_entropy(self.fc2(F.relu(self.fc1(self.norm(x)))), labels)


def loss(out):
    return out


def get_inputs():
    return [torch.randn(1024, 768), torch.randint(0, 100, (1024,))]


def get_init_inputs():
    return [768, 1024, 100]
