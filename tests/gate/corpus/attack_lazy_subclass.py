# attack: lazy / subclass output (T3). Outputs are a torch.Tensor subclass whose values would
#   only be produced when someone looks (a deferred-evaluation container).
# expect: output_type
# needs: cpu
import torch
import torch.nn.functional as F


class Deferred(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y.as_subclass(Deferred), p.as_subclass(Deferred), x, xc, m, ms)
