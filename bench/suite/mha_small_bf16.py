"""Small multi-head attention (short sequences, launch bound): B=2, S=128, d=512, 8 heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.o = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, s, d = x.shape
        h = self.n_heads

        def heads(t):
            return t.view(b, s, h, d // h).transpose(1, 2)

        y = F.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)), heads(self.v(x)))
        return self.o(y.transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(2, 128, 512)]


def get_init_inputs():
    return [512, 8]
