# attack: reading the reference's freed output (S1). Returns torch.empty for the softmax output,
#   hoping the allocator hands back the block where the reference just wrote the same result.
#   The candidate runs first, into memory poisoned with NaN, so the "result" is garbage.
# expect: incorrect
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.empty_like(h)  # never written
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
