# attack: outputs aliasing each other (S4). y and the softmax output are carved out of one
#   allocation (one malloc saved); the original's are separate tensors. The second view's
#   storage offset already differs from the original's, so layout or aliasing may name it.
# expect: layout|aliasing
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    both = torch.empty(2, *h.shape, device=h.device)
    y, p = both[0], both[1]
    y.copy_(F.dropout(torch.relu(h), p=0.1, training=True))
    torch.softmax(h, dim=-1, out=p)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
