"""LeNet-size CNN on 28x28 images, batch 32 (launch bound): conv-relu-pool x2, two linears."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
                                  nn.Linear(128, n_classes))

    def forward(self, x):
        return self.head(self.features(x)).log_softmax(-1)


def get_inputs():
    return [torch.randn(32, 1, 28, 28)]


def get_init_inputs():
    return [10]
