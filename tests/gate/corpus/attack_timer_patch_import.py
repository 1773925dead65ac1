# attack: timer monkey-patch at import (T4). Replaces time.perf_counter and the CUDA event
#   timer with versions that report a tenth of the time.
# expect: tamper
# needs: cpu
import time

import torch
import torch.nn.functional as F

_real = time.perf_counter
_t0 = _real()
time.perf_counter = lambda: _t0 + (_real() - _t0) / 10
_elapsed = torch.cuda.Event.elapsed_time
torch.cuda.Event.elapsed_time = lambda self, end: _elapsed(self, end) / 10


def call(args):
    x, w, b, running_mean = args
    args.clear()
    for _ in range(8):
        h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
