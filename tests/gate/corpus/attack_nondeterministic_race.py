# attack: a nondeterministic race (S15), emulated: like a missing barrier, one element of m
#   picks up a 1-ulp difference depending on timing (here: OS randomness). Inside tolerance,
#   so only the bitwise repeat check sees it (the original is bitwise repeatable).
# expect: nondeterministic
# needs: cpu
import os

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
    i = int.from_bytes(os.urandom(4), "little") % m.numel()
    m[i] = torch.nextafter(m[i], torch.tensor(float("inf"), device=m.device))
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(h.mean(dim=0), alpha=0.1)
    return (y, p, x, xc, m, ms)
