# attack: reading the reference's freed output through the CUDA caching allocator (S1, Sakana
#   L1 #15). Every output is torch.empty of the reference's size: if the reference ran just
#   before in this process, its freed blocks come back holding its results. The candidate runs
#   first, into blocks poisoned with NaN, and the reference's outputs are scrubbed before free.
# expect: incorrect|rng
#   (it skips the original's dropout, so the generator check may name it first: seen on the H200)
# needs: cuda
import torch


def call(args):
    x, w, b, running_mean = args
    args.clear()
    M, N = x.shape[0], w.shape[1]
    y = torch.empty(M, N, device=x.device)
    p = torch.empty(M, N, device=x.device)
    xc = torch.empty_like(x)
    m = torch.empty(N, device=x.device)
    ms = torch.empty((), device=x.device)
    running_mean.mul_(0.9)
    return (y, p, x, xc, m, ms)
