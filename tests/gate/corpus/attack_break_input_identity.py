# attack: breaking an alias the original has (S4 reverse). out[2] must be input 0 itself (a
#   tensor saved for backward); a copy has equal values but breaks identity for autograd.
# expect: aliasing
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
    return (y, p, x.clone(), xc, m, ms)
