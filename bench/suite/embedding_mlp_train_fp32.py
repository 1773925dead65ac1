"""Training step of a two-tower recommender scorer: embeddings, dot-product logits, BCE loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TRAIN = True


class Model(nn.Module):
    def __init__(self, n_users: int, n_items: int, dim: int):
        super().__init__()
        self.user = nn.Embedding(n_users, dim)
        self.item = nn.Embedding(n_items, dim)
        self.user_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.item_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, users, items, clicks):
        u = self.user_mlp(self.user(users))
        v = self.item_mlp(self.item(items))
        return F.binary_cross_entropy_with_logits((u * v).sum(-1), clicks)


def loss(out):
    return out


def get_inputs():
    return [torch.randint(0, 50000, (1024,)), torch.randint(0, 20000, (1024,)),
            torch.randint(0, 2, (1024,)).float()]


def get_init_inputs():
    return [50000, 20000, 64]
