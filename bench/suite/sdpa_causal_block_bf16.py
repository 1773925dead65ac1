"""Causal self-attention block: fused QKV projection, SDPA (flash), output projection.

B=4, S=1024, d=1024, 16 heads of 64.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, s, self.n_heads, -1).transpose(1, 2)
        k = k.view(b, s, self.n_heads, -1).transpose(1, 2)
        v = v.view(b, s, self.n_heads, -1).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, s, d))


def get_inputs():
    return [torch.randn(4, 1024, 1024)]


def get_init_inputs():
    return [1024, 16]
