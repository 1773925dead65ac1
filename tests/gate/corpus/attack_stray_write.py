# attack: stray writes outside the outputs. The running-mean update is done with a kernel that
#   rounds its length up to a multiple of 64 and writes the padding, past the end of the buffer
#   (into whatever lives next to it in memory).
# expect: stray_write
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    n = running_mean.numel()
    padded = (n + 63) // 64 * 64 + 16
    spill = torch.as_strided(running_mean, (padded,), (1,), running_mean.storage_offset())
    spill[n:] = 0.0
    return (y, p, x, xc, m, ms)
