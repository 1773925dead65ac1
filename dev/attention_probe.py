"""TileOPs attention against an fp32 SDPA reference on the layouts and value ranges the gate
feeds a transformer block's candidate: q, k, v contiguous or as the [B, S, 3, H, D] split of one
fused QKV projection, normal values and values of a large magnitude (the gate's high_magnitude
class scales every input, weights too, by 30 in bf16). Prints max abs error, elements over a
bf16 tolerance and NaN counts per case.

    python dev/attention_probe.py
"""
import torch
import torch.nn.functional as F

from tileops import _kernels
from tileops.ops import MultiHeadAttentionFwdOp


def per_config(q, k, v, ref, causal, tol):
    """Over-tolerance and NaN counts of each kernel config on the same inputs, and where the
    worst element sits (b, h, query row, d)."""
    op = MultiHeadAttentionFwdOp(is_causal=causal)
    op(q, k, v)  # loads the launcher
    call = op.bind((q, k, v))
    stream = torch.cuda.current_stream().cuda_stream
    for cfg in range(_kernels.num_configs("attention")):
        out = torch.full_like(q, float("nan"), memory_format=torch.contiguous_format)
        try:
            op._launch(call, (q, k, v), [out], cfg, stream)
            torch.cuda.synchronize()
        except Exception as e:  # a config that refuses the shape
            print(f"    config {cfg}: {type(e).__name__}: {e}")
            continue
        err = (out.double() - ref).abs().nan_to_num(float("inf"))
        over = (err > tol) | out.isnan()
        where = [int(i) for i in torch.unravel_index(err.argmax(), err.shape)]
        print(f"    config {cfg}: {int(over.sum())} over tol, {int(out.isnan().sum())} NaN, "
              f"max err {err.max():.3g} at {where}", flush=True)


def case(b, h, s, d, split, magnitude, causal=True, seed=0, configs=False):
    g = torch.Generator(device="cuda").manual_seed(seed)
    if split:  # one [B, S, 3 * H * D] projection viewed as q, k, v: head stride D, row stride 3HD
        qkv = torch.randn(b, s, 3 * h * d, device="cuda", generator=g) * magnitude
        qkv = qkv.to(torch.bfloat16)
        q, k, v = (t.view(b, s, h, d).transpose(1, 2) for t in qkv.split(h * d, dim=-1))
    else:
        q, k, v = (
            (torch.randn(b, h, s, d, device="cuda", generator=g) * magnitude).to(torch.bfloat16)
            for _ in range(3))
    ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
    out = MultiHeadAttentionFwdOp(is_causal=causal)(q, k, v).double()
    cmp = F.scaled_dot_product_attention(q, k, v, is_causal=causal).double()
    tol = 2e-2 + 2e-2 * ref.abs()
    over = ((out - ref).abs() > tol) | out.isnan()
    over_sdpa = ((cmp - ref).abs() > tol) | cmp.isnan()
    print(f"B{b} H{h} S{s} D{d} {'split' if split else 'contig'} x{magnitude:g} "
          f"causal={causal}: tileops max err {(out - ref).abs().nan_to_num(float('inf')).max():.3g}, "
          f"{int(over.sum())} over tol, {int(out.isnan().sum())} NaN | sdpa {int(over_sdpa.sum())} "
          f"over tol, {int(cmp.isnan().sum())} NaN", flush=True)
    if configs or int(over.sum()):
        per_config(q, k, v, ref, causal, tol)


if __name__ == "__main__":
    for split in (False, True):
        for magnitude in (1.0, 30.0, 900.0):
            case(4, 16, 1024, 64, split, magnitude, configs=(split and magnitude == 1.0))
    case(4, 16, 512, 64, True, 1.0, causal=False)
    case(2, 8, 1024, 128, True, 900.0)
