# attack: partial computation / subsampling (S7). mean(x * x) over every 4th column only: close
#   for i.i.d. inputs, wrong for sparse spikes and most other inputs.
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
    xs = x[:, ::4]
    ms = (xs * xs).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
