"""Recommender tower: three embedding lookups (pooled), concat with dense features, MLP, sigmoid."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab: int, dim: int, n_dense: int):
        super().__init__()
        self.user = nn.Embedding(vocab, dim)
        self.item = nn.Embedding(vocab, dim)
        self.tags = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(3 * dim + n_dense, 256), nn.ReLU(), nn.Linear(256, 64),
                                 nn.ReLU(), nn.Linear(64, 1))

    def forward(self, user_ids, item_ids, tag_ids, dense):
        feats = torch.cat([self.user(user_ids), self.item(item_ids), self.tags(tag_ids), dense], -1)
        return torch.sigmoid(self.mlp(feats))


def get_inputs():
    return [
        torch.randint(0, 100000, (512,)),
        torch.randint(0, 100000, (512,)),
        torch.randint(0, 100000, (512, 8)),
        torch.randn(512, 13),
    ]


def get_init_inputs():
    return [100000, 64, 13]
