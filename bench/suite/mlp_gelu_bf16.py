"""Transformer MLP block (GPT-2 style): Linear -> GELU(tanh) -> Linear, 2048 tokens, d=1024."""
import torch
import torch.nn as nn

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_model)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x), approximate="tanh"))


def get_inputs():
    return [torch.randn(8, 256, 1024)]


def get_init_inputs():
    return [1024, 4096]
