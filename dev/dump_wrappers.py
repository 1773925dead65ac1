"""Dumps the CUDA wrappers Inductor generates for a few representative graphs (samples for
developing rewriters), and times each graph three ways: Inductor's call(), eager, and a CUDA
graph replay of call() (what launch-overhead removal could win).

    python dev/dump_wrappers.py OUT_DIR
"""

import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._inductor.compile_fx import compile_fx, compile_fx_inner

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
captured = []


def backend(gm, example_inputs):
    def inner(gm2, ex2, **kw):
        out = compile_fx_inner(gm2, ex2, **kw)
        kind = "backward" if kw.get("is_backward") else ("inference" if kw.get("is_inference") else "forward")
        captured.append((kind, out, gm2.print_readable(print_output=False)))
        return out

    with torch._functorch.config.patch(enable_autograd_cache=False):
        return compile_fx(gm, example_inputs, inner_compile=inner)


class MLP(nn.Module):
    def __init__(s, d=4096, h=11008):
        super().__init__()
        s.up = nn.Linear(d, h)
        s.down = nn.Linear(h, d)

    def forward(s, x):
        return s.down(F.gelu(s.up(x)))


class GatedMLP(nn.Module):
    def __init__(s, d=2048, h=5632):
        super().__init__()
        s.gate = nn.Linear(d, h, bias=False)
        s.up = nn.Linear(d, h, bias=False)
        s.down = nn.Linear(h, d, bias=False)
        s.norm = nn.RMSNorm(d)

    def forward(s, x):
        y = s.norm(x)
        return x + s.down(F.silu(s.gate(y)) * s.up(y))


class Attn(nn.Module):
    def __init__(s, d=1024, heads=16):
        super().__init__()
        s.h = heads
        s.qkv = nn.Linear(d, 3 * d)
        s.o = nn.Linear(d, d)
        s.ln = nn.LayerNorm(d)

    def forward(s, x):
        b, t, d = x.shape
        q, k, v = s.qkv(s.ln(x)).view(b, t, 3, s.h, d // s.h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + s.o(y.transpose(1, 2).reshape(b, t, d))


class ConvBlock(nn.Module):
    def __init__(s):
        super().__init__()
        s.c = nn.Conv2d(64, 64, 3, padding=1)
        s.bn = nn.BatchNorm2d(64)

    def forward(s, x):
        return F.relu(s.bn(s.c(x))) + x


class Tiny(nn.Module):  # launch bound
    def __init__(s):
        super().__init__()
        s.l = nn.ModuleList([nn.Linear(256, 256) for _ in range(4)])

    def forward(s, x):
        for l in s.l:
            x = F.layer_norm(F.silu(l(x)), (256,))
        return x


class Loss(nn.Module):
    def __init__(s):
        super().__init__()
        s.head = nn.Linear(1024, 32000, bias=False)

    def forward(s, x, t):
        return F.cross_entropy(s.head(x).float(), t)


dev = "cuda"
cases = [
    ("mlp_bf16", MLP().to(dev, torch.bfloat16).eval(), (torch.randn(2048, 4096, device=dev, dtype=torch.bfloat16),), False),
    ("gated_mlp_bf16", GatedMLP().to(dev, torch.bfloat16).eval(), (torch.randn(4, 512, 2048, device=dev, dtype=torch.bfloat16),), False),
    ("attn_bf16", Attn().to(dev, torch.bfloat16).eval(), (torch.randn(4, 512, 1024, device=dev, dtype=torch.bfloat16),), False),
    ("conv_fp32", ConvBlock().to(dev).eval(), (torch.randn(16, 64, 56, 56, device=dev),), False),
    ("tiny_fp32", Tiny().to(dev).eval(), (torch.randn(8, 256, device=dev),), False),
    ("tiny_train_fp32", Tiny().to(dev), (torch.randn(8, 256, device=dev),), True),
    ("loss_train_bf16", Loss().to(dev, torch.bfloat16), (torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16), torch.randint(0, 32000, (1024,), device=dev)), True),
    ("gated_mlp_train_bf16", GatedMLP().to(dev, torch.bfloat16), (torch.randn(2, 256, 2048, device=dev, dtype=torch.bfloat16),), True),
]


def cuda_time(fn, n=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


summary = []
for name, model, inputs, train in cases:
    captured.clear()
    torch._dynamo.reset()
    cm = torch.compile(model, backend=backend)
    if train:
        inputs = tuple(i.requires_grad_() if i.is_floating_point() else i for i in inputs)
        out = cm(*inputs)
        (out if out.dim() == 0 else out.float().sum()).backward()
    else:
        with torch.no_grad():
            cm(*inputs)
    for gi, (kind, og, fx) in enumerate(captured):
        tag = f"{name}.{gi}.{kind}"
        with open(os.path.join(out_dir, tag + ".py"), "w") as f:
            f.write(og.source_code)
        with open(os.path.join(out_dir, tag + ".fx.txt"), "w") as f:
            f.write(fx)
        rec = {"graph": tag, "type": type(og).__name__, "static_input_idxs": list(og.fx_kwargs.get("static_input_idxs") or []),
               "mutated_input_idxs": sorted(og.mutated_input_idxs or []), "output_strides": [list(map(str, s)) if s else None for s in (og.output_strides or [])],
               "inputs_to_check": list(og.inputs_to_check or []), "device_idxs": sorted(og.device_idxs), "cudagraphs": bool(og.fx_kwargs.get("cudagraphs"))}
        summary.append(rec)
    if not train:
        with torch.no_grad():
            t_ind = cuda_time(lambda: cm(*inputs))
            t_eager = cuda_time(lambda: model(*inputs))
            torch._dynamo.reset()
            ro = torch.compile(model, mode="reduce-overhead")
            t_ro = cuda_time(lambda: ro(*inputs))
        summary.append({"model": name, "eager_ms": t_eager, "inductor_ms": t_ind, "reduce_overhead_ms": t_ro})
        print(summary[-1], file=sys.stderr)
json.dump(summary, open(os.path.join(out_dir, "summary.json"), "w"), indent=1)
print(json.dumps(summary, indent=1))
