# attack: background process (T2 with a process instead of a thread). Hands the work to a child
#   process that keeps running after call() returns (here it only sleeps: the point is that it
#   outlives the timed region). The worker server kills whatever a job leaves in its process
#   group and the host rejects the candidate for it.
# expect: background_thread
# needs: cpu
import subprocess
import sys

import torch
import torch.nn.functional as F

_started = False


def call(args):
    global _started
    x, w, b, running_mean = args
    args.clear()
    if not _started:
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        _started = True
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
