# attack: near-constant output under a loose tolerance (S5). Softmax rows over N=256 classes are
#   all close to 1/N for small logits, so a constant passes allclose(atol=1e-2). Tolerances
#   scaled to the reference's own magnitude (and high-magnitude inputs) do not let it.
# expect: incorrect
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.full_like(h, 1.0 / h.shape[-1])
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
