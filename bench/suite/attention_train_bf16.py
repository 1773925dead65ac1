"""Training step of a multi-head self-attention layer (non-causal SDPA), B=8, S=256, d=512."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16
TRAIN = True


class Model(nn.Module):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.out = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.n_heads, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, s, d))


def loss(out):
    return out.float().pow(2).mean()


def get_inputs():
    return [torch.randn(8, 256, 512)]


def get_init_inputs():
    return [512, 8]
