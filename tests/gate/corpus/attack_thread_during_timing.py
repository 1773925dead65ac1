# attack: background thread started only once the candidate believes it is being timed (T2 +
#   S12). Correct outputs always; from call 30 on, each call leaves a thread burning CPU into the
#   next (the original's) timed interval, inflating the baseline.
# expect: background_thread
# needs: cpu
import threading
import time

import torch
import torch.nn.functional as F

_calls = 0


def _burn():
    t = time.perf_counter()
    while time.perf_counter() - t < 0.01:
        pass


def call(args):
    global _calls
    x, w, b, running_mean = args
    args.clear()
    _calls += 1
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    if _calls > 30:
        threading.Thread(target=_burn, daemon=True).start()
    return (y, p, x, xc, m, ms)
