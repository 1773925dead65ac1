"""Small models the Tilesmith tests compile (test-only)."""

import torch


class Small(torch.nn.Module):
    """One Linear, a ReLU and a pointwise tail: one Inductor graph with a Triton kernel."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2 + 1
