# attack: result replay keyed on input addresses (T5, "cache keyed on data_ptr"). Computes once
#   per input address and afterwards returns copies of the stored result, so re-timing the same
#   buffers costs nothing. Rotating buffers whose values change expose the stale results.
# expect: incorrect
# needs: cpu
import torch
import torch.nn.functional as F

_cache = {}


def call(args):
    x, w, b, running_mean = args
    args.clear()
    key = (x.data_ptr(), w.data_ptr(), b.data_ptr())
    if key in _cache:
        out, rm = _cache[key]
        running_mean.copy_(rm)
        return tuple(o.clone() if i != 2 else x for i, o in enumerate(out))
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    _cache[key] = ((y.clone(), p.clone(), None, xc.clone(), m.clone(), ms.clone()),
                   running_mean.clone())
    return (y, p, x, xc, m, ms)
