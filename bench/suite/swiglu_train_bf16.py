"""Training step of an RMSNorm + SwiGLU MLP block (LLaMA FFN sublayer), 2048 tokens, d=1024."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16
TRAIN = True


class Model(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.ones(d_model))
        self.w1 = nn.Linear(d_model, d_hidden, bias=False)
        self.w3 = nn.Linear(d_model, d_hidden, bias=False)
        self.w2 = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x):
        h = x.float()
        h = (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.norm_weight
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


def loss(out):
    return out.float().pow(2).mean()


def get_inputs():
    return [torch.randn(2, 1024, 1024)]


def get_init_inputs():
    return [1024, 2816]
