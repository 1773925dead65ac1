"""Training step of a language-model head: final RMSNorm, vocabulary projection, cross entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16
TRAIN = True


class Model(nn.Module):
    def __init__(self, d_model: int, vocab: int):
        super().__init__()
        self.norm = nn.RMSNorm(d_model, eps=1e-6)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, h, targets):
        logits = self.head(self.norm(h)).float()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def loss(out):
    return out


def get_inputs():
    return [torch.randn(4, 512, 1024), torch.randint(0, 32000, (4, 512))]


def get_init_inputs():
    return [1024, 32000]
