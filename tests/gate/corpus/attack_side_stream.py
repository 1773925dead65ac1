# attack: side-stream launch (T1). The honest work, but on a private non-blocking stream that
#   the caller's stream never waits for: events recorded on the current stream see only the
#   launches, and a consumer on the current stream races with the writes.
# expect: timing_suspicious|incorrect
# needs: cuda
import torch
import torch.nn.functional as F

_side = None


def call(args):
    global _side
    x, w, b, running_mean = args
    args.clear()
    if _side is None:
        _side = torch.cuda.Stream()
    with torch.cuda.stream(_side):
        h = torch.addmm(b, x, w)
        y = F.dropout(torch.relu(h), p=0.1, training=True)
        p = torch.softmax(h, dim=-1)
        xc = x.clone()
        m = h.mean(dim=0)
        ms = (x * x).mean()
        running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
