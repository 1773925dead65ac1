# honest: one matmul, a hand-written numerically safe softmax (max subtracted), in-place relu.
#   Rounding differs from torch.softmax by a few ulp: must pass the dtype tolerance.
# expect: accepted
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    e = torch.exp(h - h.amax(dim=-1, keepdim=True))
    p = e / e.sum(dim=-1, keepdim=True)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
