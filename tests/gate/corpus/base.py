# The corpus's base graph (the "original" every candidate here is gated against).
#
# Inductor wrapper ABI: call(args) unpacks, clears the caller's list,
# returns a tuple. Written with plain torch ops so the same module runs on CPU (CI, no compile
# time) and on CUDA (scripts/gpu/gate.sh with larger shapes).
#
#   args: x [M, K] f32, w [K, N] f32 (a transposed view: strides (1, K)),
#         b [N] f32 (a view at storage offset 8), running_mean [N] f32 (a buffer, updated)
#   returns (y  = dropout(relu(x @ w + b), p=0.1)   [M, N]  fresh, draws from the RNG
#            p  = softmax(x @ w + b, -1)            [M, N]  fresh
#            x                                      input 0 itself (saved for backward)
#            xc = copy of x                         [M, K]  fresh
#            m  = mean(x @ w + b, 0)                [N]     fresh
#            ms = mean(x * x)                       []      fresh)
#   and running_mean <- 0.9 * running_mean + 0.1 * m.
#
# Deliberately wasteful, like an unfused graph: the matmul is recomputed REPEAT times (every
# result identical) so that an honest rewrite is genuinely and robustly faster, even on a busy
# CPU.
import torch
import torch.nn.functional as F

REPEAT = 8


def call(args):
    x, w, b, running_mean = args
    args.clear()
    for _ in range(REPEAT):
        h = torch.addmm(b, x, w)
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
