# attack: skipped RNG advance (S10). Same dropout mask, but the generator is rewound afterwards,
#   so every later random draw in the program repeats (the original advances it).
# expect: rng
# needs: cpu
import torch
import torch.nn.functional as F


def call(args):
    x, w, b, running_mean = args
    args.clear()
    h = torch.addmm(b, x, w)
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state() if x.is_cuda else None
    y = F.dropout(torch.relu(h), p=0.1, training=True)
    torch.set_rng_state(cpu_state)
    if cuda_state is not None:
        torch.cuda.set_rng_state(cuda_state)
    p = torch.softmax(h, dim=-1)
    xc = x.clone()
    m = h.mean(dim=0)
    ms = (x * x).mean()
    running_mean.mul_(0.9).add_(m, alpha=0.1)
    return (y, p, x, xc, m, ms)
