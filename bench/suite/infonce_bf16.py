"""CLIP-style contrastive loss: normalize, cosine-similarity matrix, symmetric cross entropy."""
import torch
import torch.nn as nn
import torch.nn.functional as F

DTYPE = torch.bfloat16


class Model(nn.Module):
    def __init__(self, temperature: float):
        super().__init__()
        self.logit_scale = nn.Parameter(torch.tensor(1.0 / temperature).log())

    def forward(self, image_emb, text_emb):
        img = F.normalize(image_emb, dim=-1)
        txt = F.normalize(text_emb, dim=-1)
        logits = (img @ txt.t()).float() * self.logit_scale.exp().float()
        labels = torch.arange(logits.shape[0], device=logits.device)
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


def get_inputs():
    return [torch.randn(1024, 512), torch.randn(1024, 512)]


def get_init_inputs():
    return [0.07]
