# attack: analytical shortcut from an assumed input distribution (S6). For x ~ N(0, 1),
#   E[x^2] = 1, so mean(x * x) is "computed" as 1. Random distribution parameters break it.
# expect: incorrect
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
    ms = torch.ones((), device=x.device)
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
