"""Apply rotary position embeddings to query and key (B=8, H=32, S=256, D=128), no projection."""
import torch
import torch.nn as nn

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, seq_len: int, head_dim: int):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        freqs = torch.outer(torch.arange(seq_len).float(), inv_freq)
        self.register_buffer("cos", freqs.cos(), persistent=False)
        self.register_buffer("sin", freqs.sin(), persistent=False)

    def forward(self, q, k):
        def rope(t):
            t1, t2 = t[..., ::2], t[..., 1::2]
            r1 = t1 * self.cos - t2 * self.sin
            r2 = t1 * self.sin + t2 * self.cos
            return torch.stack((r1, r2), dim=-1).flatten(-2)

        return rope(q), rope(k)


def get_inputs():
    return [torch.randn(8, 32, 256, 128), torch.randn(8, 32, 256, 128)]


def get_init_inputs():
    return [256, 128]
