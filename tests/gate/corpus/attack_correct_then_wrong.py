# attack: correct for the first N calls, then wrong (S12; llm.c PR #852's regression test).
#   After 30 calls out[0][0, 0] is corrupted: past every correctness trial, inside timing.
# expect: incorrect
# needs: cpu
import torch
import torch.nn.functional as F

_calls = 0


def call(args):
    global _calls
    x, w, b, running_mean = args
    args.clear()
    _calls += 1
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    if _calls > 30:
        y[0, 0] = 12345.0
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
