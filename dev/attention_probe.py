"""TileOPs attention against an fp32 SDPA reference on the layouts and value ranges the gate
feeds a transformer block's candidate: q, k, v contiguous or as the [B, S, 3, H, D] split of one
fused QKV projection, normal values and values of a large magnitude (the gate's high_magnitude
class scales every input, weights too, by 30 in bf16). Prints max abs error, elements over a
bf16 tolerance and NaN counts per case.

    python dev/attention_probe.py
"""
import torch
import torch.nn.functional as F

from tileops.attention import MultiHeadAttentionFwdOp


def case(b, h, s, d, split, magnitude, causal=True, seed=0):
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


if __name__ == "__main__":
    for split in (False, True):
        for magnitude in (1.0, 30.0, 900.0):
            case(4, 16, 1024, 64, split, magnitude)
    case(4, 16, 512, 64, True, 1.0, causal=False)
    case(2, 8, 1024, 128, True, 900.0)
