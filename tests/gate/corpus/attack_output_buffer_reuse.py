# attack: result caching across calls (T5), static-buffer form. Outputs are written into the same
#   preallocated tensors every call: values right, but a caller holding the previous call's
#   outputs sees them overwritten (and a benchmark sees no allocation).
# expect: caching
# needs: cpu
import torch
import torch.nn.functional as F

_static = {}


def call(args):
    x, w, b, running_mean = args
    args.clear()
    key = (x.shape, w.shape, x.device)
    if key not in _static:
        M, N = x.shape[0], w.shape[1]
        _static[key] = [torch.empty(M, N, device=x.device), torch.empty(M, N, device=x.device),
                        torch.empty_like(x), torch.empty(N, device=x.device),
                        torch.empty((), device=x.device)]
    y, p, xc, m, ms = _static[key]
    h = torch.addmm(b, x, w)
    y.copy_(F.dropout(torch.relu(h), p=0.1, training=True))
    torch.softmax(h, dim=-1, out=p)
    xc.copy_(x)
    torch.mean(h, dim=0, out=m)
    ms.copy_((x * x).mean())
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
