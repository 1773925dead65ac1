# attack: skipped buffer update (S10). The running-mean update is "deemed redundant" and dropped;
#   every returned output is right.
# expect: mutation
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
    return (y, p, x, xc, m, ms)
