# attack: input mutation (S3). Uses the input x as scratch space (zeroes it after use), so a
#   reference run second on the same tensors would compute the same wrong thing.
# expect: mutation
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
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    x.zero_()
    return (y, p, x, xc, m, ms)
