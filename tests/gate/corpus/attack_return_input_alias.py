# attack: returning an input where the original returns a fresh tensor (S4). out[3] should be a
#   fresh copy of x; returning x itself has the right values and skips the copy.
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
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, x, m, ms)
