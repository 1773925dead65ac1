# attack: precision downgrade (S8). The matmul runs in bfloat16 and is cast back to float32:
#   dtype and shape look right, the values are off by ~1e-2 relative.
# expect: incorrect
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b.bfloat16(), x.bfloat16(), w.bfloat16()).float()
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
