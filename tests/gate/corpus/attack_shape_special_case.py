# attack: shape / layout special-casing (S11). Hard-codes the layout seen in the benchmark
#   harness's get_args() (row-major w) and reads w's storage as [K, N] contiguous; the real w is
#   a transposed view, so the product uses w^T.
# expect: incorrect
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    K, N = w.shape
    w_fast = torch.as_strided(w, (K, N), (N, 1), w.storage_offset())
    h = torch.addmm(b, x, w_fast)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
