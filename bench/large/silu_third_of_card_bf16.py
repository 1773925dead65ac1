"""SiLU over an input as large as a third of the GPU's memory (bf16): one kernel, so eager and
Inductor fit beside their input and output (two thirds of the card), and the gate and the bench
must fit next to them or say plainly why not. Sized from the card it runs on when the inputs are
made; on a machine without CUDA the input is small."""
import torch
import torch.nn as nn

DTYPE = torch.bfloat16
HIDDEN = 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x)


def get_inputs():
    if not torch.cuda.is_available():
        return [torch.empty(64, HIDDEN, dtype=DTYPE).uniform_(-4, 4)]
    total = torch.cuda.get_device_properties(0).total_memory
    rows = total // 3 // (HIDDEN * 2) + 1  # just over a third of the card
    # Made on the device: filling tens of GiB on the host first takes minutes.
    return [torch.empty(rows, HIDDEN, dtype=DTYPE, device="cuda").uniform_(-4, 4)]


def get_init_inputs():
    return []
