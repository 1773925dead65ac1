# attack: stale / uninitialized memory that happens to match (S2). m is written into torch.empty
#   except for its last element, which keeps whatever the allocator had there.
# expect: incorrect|nondeterministic
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
    m = torch.empty(h.shape[1], device=h.device)
    m[:-1] = h[:, :-1].mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(h.mean(dim=0), alpha=0.1)
    return (y, p, x, xc, m, ms)
