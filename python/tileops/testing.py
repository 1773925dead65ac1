"""What contract tests and benchmarks share: small and awkward call values per op (as spec
variables), input construction, layouts, fp64 reference formulas and per-dtype tolerances.

Tests own their assertions; this module owns no checks. Inputs are always derived from the
spec: a case names variable values (`{"B": [3], "N": 37}`) and `OpSpec.instantiate` evaluates
the inputs' shapes from the signature, so a spec change changes the tests with it.
"""

from __future__ import annotations

import dataclasses
import math
import re

import torch

from . import manifest
from .op import TORCH_DTYPES


@dataclasses.dataclass(frozen=True)
class Case:
    """One call, as values of the spec's variables, params and absent optional inputs."""

    values: dict
    params: dict = dataclasses.field(default_factory=dict)
    absent: tuple = ()
    label: str = ""

    def id(self) -> str:
        if self.label:
            return self.label
        parts = [f"{k}{'x'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                 for k, v in self.values.items()]
        parts += [f"{k}={v}" for k, v in self.params.items()]
        parts += [f"no-{a}" for a in self.absent]
        return "-".join(parts) or "default"


@dataclasses.dataclass(frozen=True)
class Reject:
    """A call the spec refuses, with the text the binder's message must contain."""

    values: dict
    message: str
    params: dict = dataclasses.field(default_factory=dict)


def _gemm_cases():
    out = []
    for ta, tb in ((False, True), (False, False), (True, True), (True, False)):
        for m, n, k in ((1, 1, 1), (3, 5, 7), (37, 130, 65), (128, 256, 64), (257, 129, 200)):
            out.append(Case({"M": m, "N": n, "K": k}, {"trans_a": ta, "trans_b": tb}))
    out.append(Case({"M": 16, "N": 24, "K": 0}, label="empty-K"))
    return out


# Sizes of 1, odd sizes, sizes that are not a multiple of any tile or vector width, rows long
# enough to take the streaming paths, and empty batches.
CASES: dict[str, list[Case]] = {
    "RMSNormFwdOp": [
        Case({"B": [1], "N": 1}), Case({"B": [3], "N": 37}), Case({"B": [2, 5], "N": 130}),
        Case({"B": [], "N": 64}), Case({"B": [7], "N": 4099}), Case({"B": [300], "N": 1024}),
        Case({"B": [3], "N": 70001}), Case({"B": [0], "N": 16}),
        Case({"B": [4], "N": 96}, {"eps": 0.5}),
    ],
    "LayerNormFwdOp": [
        Case({"B": [1], "N": 1}), Case({"B": [3], "N": 37}), Case({"B": [2, 5], "N": 130}),
        Case({"B": [7], "N": 4099}), Case({"B": [3], "N": 70001}),
        Case({"B": [5], "N": 200}, absent=("weight", "bias")),
        Case({"B": [5], "N": 200}, absent=("bias",)),
        Case({"B": [5], "N": 200}, absent=("weight",)),
        Case({"B": [4], "N": 96}, {"eps": 0.25}),
    ],
    "SoftmaxFwdOp": [
        Case({"B": [1], "N": 1}), Case({"B": [3], "N": 37}), Case({"B": [2, 3], "N": 1000}),
        Case({"B": [17], "N": 8}), Case({"B": [300], "N": 2048}), Case({"B": [2], "N": 131073}),
        Case({"B": [0], "N": 5}),
        # Rows split over a cluster of CTAs: uneven slices, and a vocab-sized decode batch.
        Case({"B": [3], "N": 20008}), Case({"B": [16], "N": 128256}),
    ],
    "SiluAndMulFwdOp": [
        Case({"B": [1], "N": 1}), Case({"B": [3], "N": 37}), Case({"B": [2, 3], "N": 1000}),
        Case({"B": [4], "N": 14336}), Case({"B": [300], "N": 130}), Case({"B": [0], "N": 4}),
    ],
    "RoPENeoXFwdOp": [
        Case({"S": 1, "Hq": 1, "Hk": 1, "D": 2, "P": 4, "R": 2}),
        Case({"S": 5, "Hq": 4, "Hk": 2, "D": 64, "P": 16, "R": 64}),
        Case({"S": 7, "Hq": 6, "Hk": 3, "D": 96, "P": 32, "R": 24}),
        Case({"S": 33, "Hq": 8, "Hk": 8, "D": 128, "P": 64, "R": 128}),
        Case({"S": 3, "Hq": 2, "Hk": 1, "D": 80, "P": 8, "R": 78}),
        Case({"S": 300, "Hq": 4, "Hk": 1, "D": 128, "P": 512, "R": 128}),
    ],
    "GEMMFwdOp": _gemm_cases(),
    "MultiHeadAttentionFwdOp": [
        Case({"B": 1, "Hq": 1, "Hkv": 1, "Sq": 1, "Skv": 1, "D": 64}),
        Case({"B": 2, "Hq": 4, "Hkv": 2, "Sq": 37, "Skv": 37, "D": 64}, {"is_causal": True}),
        Case({"B": 1, "Hq": 8, "Hkv": 1, "Sq": 130, "Skv": 200, "D": 128}, {"is_causal": True}),
        Case({"B": 1, "Hq": 8, "Hkv": 1, "Sq": 130, "Skv": 200, "D": 128}),
        Case({"B": 2, "Hq": 2, "Hkv": 2, "Sq": 65, "Skv": 65, "D": 256}, {"scale": 0.3}),
        Case({"B": 3, "Hq": 8, "Hkv": 2, "Sq": 1, "Skv": 300, "D": 128}),
        Case({"B": 2, "Hq": 8, "Hkv": 2, "Sq": 5, "Skv": 77, "D": 64}),  # 4 heads packed: 20 rows
        Case({"B": 1, "Hq": 4, "Hkv": 4, "Sq": 257, "Skv": 257, "D": 128}, {"is_causal": True}),
        # 140 query tiles of 1 to 5 key blocks: more than one per SM (132 on the H100 and H200),
        # so persistent CTAs walk two tiles of different lengths, their rings running across both
        Case({"B": 1, "Hq": 28, "Hkv": 4, "Sq": 520, "Skv": 520, "D": 128}, {"is_causal": True}),
    ],
}

REJECTS: dict[str, list[Reject]] = {
    "RMSNormFwdOp": [Reject({"B": [2], "N": 0}, "the normalized dimension cannot be empty"),
                     Reject({"B": [2], "N": 8}, "eps must be positive", {"eps": 0.0})],
    "LayerNormFwdOp": [Reject({"B": [2], "N": 0}, "the normalized dimension cannot be empty"),
                       Reject({"B": [2], "N": 8}, "eps must be positive", {"eps": -1.0})],
    "SoftmaxFwdOp": [Reject({"B": [2], "N": 0}, "softmax over an empty dimension is undefined")],
    "SiluAndMulFwdOp": [],
    "RoPENeoXFwdOp": [
        Reject({"S": 2, "Hq": 2, "Hk": 1, "D": 8, "P": 4, "R": 3}, "the rotary dims must be even"),
        Reject({"S": 2, "Hq": 2, "Hk": 1, "D": 8, "P": 4, "R": 10}, "the rotary dims must be even"),
        Reject({"S": 2, "Hq": 3, "Hk": 2, "D": 8, "P": 4, "R": 8},
               "query heads must be a multiple of key heads"),
    ],
    "GEMMFwdOp": [],
    "MultiHeadAttentionFwdOp": [
        Reject({"B": 1, "Hq": 2, "Hkv": 1, "Sq": 4, "Skv": 4, "D": 96},
               "head dims 64, 128 and 256 are supported"),
        Reject({"B": 1, "Hq": 3, "Hkv": 2, "Sq": 4, "Skv": 4, "D": 64},
               "query heads must be a multiple of kv heads"),
        Reject({"B": 1, "Hq": 2, "Hkv": 1, "Sq": 4, "Skv": 4, "D": 64}, "scale must be positive",
               {"scale": -1.0}),
    ],
}

# (rtol, atol) of the op's output against the fp64 reference, from the output dtype's rounding
# and fp32 accumulation; attention rounds softmax probabilities to the input dtype for p @ v.
TOLERANCES = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1.6e-2),
              torch.float32: (1e-5, 1e-5)}
OP_TOLERANCES = {
    "MultiHeadAttentionFwdOp": {torch.float16: (4e-3, 4e-3), torch.bfloat16: (2.5e-2, 2.5e-2)},
    "GEMMFwdOp": {torch.float16: (2e-3, 2e-3)},
}


def tolerance(op_name: str, dtype: torch.dtype) -> tuple[float, float]:
    return OP_TOLERANCES.get(op_name, {}).get(dtype, TOLERANCES[dtype])


def dtype_sets(spec: manifest.OpSpec) -> dict[str, list[str]]:
    """DType variable -> its allowed dtypes, from the declared kind `DType[float16 | bfloat16]`."""
    out = {}
    for name, kind in spec.vars:
        m = re.fullmatch(r"DType\[(.*)\]", kind)
        if m:
            out[name] = [t.strip() for t in m.group(1).split("|")]
    return out


def dtype_cases(spec: manifest.OpSpec) -> list[dict]:
    """One assignment per dtype of the first DType variable (the others at their first dtype)."""
    sets = dtype_sets(spec)
    if not sets:
        return [{}]
    first = next(iter(sets))
    return [{**{v: ts[0] for v, ts in sets.items()}, first: t} for t in sets[first]]


def instantiate(spec: manifest.OpSpec, case: Case, dtypes: dict):
    """(inputs as None or (dtype, shape), BoundCall) for a case and a dtype assignment."""
    return spec.instantiate({**case.values, **dtypes}, case.params, list(case.absent))


def _rope_cache(shape, device) -> torch.Tensor:
    p, r = shape
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, r, 2, dtype=torch.float64, device=device) / r))
    angles = torch.arange(p, dtype=torch.float64, device=device)[:, None] * inv_freq[None, :]
    return torch.cat([angles.cos(), angles.sin()], dim=-1).float()


def make_inputs(spec: manifest.OpSpec, inputs, device, seed: int = 0) -> list:
    """Tensors for `inputs` (None or (dtype, shape) per spec input) with values that suit the op:
    RoPE positions in [0, P) and a real cos/sin cache, normal values elsewhere."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    rope = spec.name == "RoPENeoXFwdOp"
    out = []
    for info, desc in zip(spec.inputs, inputs):
        if desc is None:
            out.append(None)
            continue
        dtype, shape = TORCH_DTYPES[desc[0]], tuple(desc[1])
        if rope and info["name"] == "cos_sin_cache":
            t = _rope_cache(shape, "cpu")
        elif rope and info["name"] == "positions":
            t = torch.randint(0, max(inputs[3][1][0], 1), shape, generator=gen, dtype=dtype)
        elif not dtype.is_floating_point:
            t = torch.randint(0, 16, shape, generator=gen, dtype=dtype)
        else:
            t = torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
        out.append(t.to(device))
    return out


LAYOUTS = ("contiguous", "padded", "odd-stride", "permuted")


def with_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values in another memory layout, last dim still contiguous: rows padded to a
    16-byte multiple, rows padded by 3 elements (no 16-byte vectors), or the two leading dims
    swapped in memory (as q.transpose(1, 2) of a [B, S, H, D] buffer)."""
    if layout == "contiguous" or t.dim() == 0:
        return t
    if layout == "permuted" and t.dim() >= 3:
        return t.transpose(0, 1).contiguous().transpose(0, 1)
    pad = 3 if layout == "odd-stride" else 16
    n = t.shape[-1]
    buf = torch.full((*t.shape[:-1], n + pad), float("nan") if t.is_floating_point() else 0,
                     dtype=t.dtype, device=t.device)
    view = buf[..., :n]
    view.copy_(t)
    return view


def layout_inputs(spec: manifest.OpSpec, tensors: list, layout: str) -> list:
    """Applies `layout` to every input whose spec layout allows it ("rows" or "any")."""
    return [t if t is None or info["layout"] == "contiguous" else with_layout(t, layout)
            for info, t in zip(spec.inputs, tensors)]


# -- fp64 references (the executable form of each spec's ref_api) ------------------------------

def _f64(t):
    return None if t is None else t.to(torch.float64)


def ref_rms_norm(x, weight, eps):
    x = _f64(x)
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * _f64(weight)


def ref_layer_norm(x, weight, bias, eps):
    x = _f64(x)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    y = (x - mean) / torch.sqrt(var + eps)
    if weight is not None:
        y = y * _f64(weight)
    if bias is not None:
        y = y + _f64(bias)
    return y


def ref_softmax(x):
    x = _f64(x)
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def ref_silu_and_mul(x):
    x = _f64(x)
    n = x.shape[-1] // 2
    a, b = x[..., :n], x[..., n:]
    return a / (1.0 + torch.exp(-a)) * b


def ref_rope_neox(positions, q, k, cos_sin_cache):
    """(q, k) rotated: within the first R dims, element i pairs with element i + R/2."""
    cache = _f64(cos_sin_cache)
    r = cache.shape[1]
    half = r // 2
    cos = cache[positions.long(), :half][:, None, :]
    sin = cache[positions.long(), half:][:, None, :]

    def rotate(t):
        t = _f64(t).clone()
        x1, x2 = t[..., :half].clone(), t[..., half:r].clone()
        t[..., :half] = x1 * cos - x2 * sin
        t[..., half:r] = x2 * cos + x1 * sin
        return t

    return rotate(q), rotate(k)


def ref_gemm(a, b, trans_a, trans_b):
    a, b = _f64(a), _f64(b)
    return (a.T if trans_a else a) @ (b.T if trans_b else b)


def ref_attention(q, k, v, is_causal, scale):
    q, k, v = _f64(q), _f64(k), _f64(v)
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    s = (q @ k.transpose(-1, -2)) * (scale if scale is not None else 1.0 / math.sqrt(q.shape[-1]))
    if is_causal:
        sq, skv = q.shape[2], k.shape[2]
        mask = torch.ones(sq, skv, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def reference(op_name: str, tensors: list, params: dict) -> list[torch.Tensor]:
    """fp64 results: the op's outputs, or for an in-place op the new values of its mutated inputs."""
    if op_name == "RMSNormFwdOp":
        return [ref_rms_norm(*tensors, params.get("eps", 1e-6))]
    if op_name == "LayerNormFwdOp":
        return [ref_layer_norm(*tensors, params.get("eps", 1e-5))]
    if op_name == "SoftmaxFwdOp":
        return [ref_softmax(*tensors)]
    if op_name == "SiluAndMulFwdOp":
        return [ref_silu_and_mul(*tensors)]
    if op_name == "RoPENeoXFwdOp":
        return list(ref_rope_neox(*tensors))
    if op_name == "GEMMFwdOp":
        return [ref_gemm(*tensors, params.get("trans_a", False), params.get("trans_b", True))]
    if op_name == "MultiHeadAttentionFwdOp":
        return [ref_attention(*tensors, params.get("is_causal", False), params.get("scale"))]
    raise KeyError(f"no reference for {op_name}")


def torch_equivalent(op_name: str, tensors: list, params: dict) -> list[torch.Tensor]:
    """The same computation through torch's own API (the spec's ref_api), in the inputs' dtype:
    the eager baseline of `tileops bench`, and the independent check of `reference` in tests."""
    import torch.nn.functional as F

    if op_name == "RMSNormFwdOp":
        x, w = tensors
        return [F.rms_norm(x, (x.shape[-1],), w, params.get("eps", 1e-6))]
    if op_name == "LayerNormFwdOp":
        x, w, b = tensors
        return [F.layer_norm(x, (x.shape[-1],), w, b, params.get("eps", 1e-5))]
    if op_name == "SoftmaxFwdOp":
        return [torch.softmax(tensors[0], dim=-1)]
    if op_name == "SiluAndMulFwdOp":
        x = tensors[0]
        n = x.shape[-1] // 2
        return [F.silu(x[..., :n]) * x[..., n:]]
    if op_name == "RoPENeoXFwdOp":
        positions, q, k, cache = tensors
        half = cache.shape[1] // 2
        r = cache.shape[1]
        cos = cache[positions, :half].unsqueeze(1)
        sin = cache[positions, half:].unsqueeze(1)

        def rot(t):
            x1, x2 = t[..., :half].float(), t[..., half:r].float()
            rotated = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(t.dtype)
            return torch.cat([rotated, t[..., r:]], dim=-1)

        return [rot(q), rot(k)]
    if op_name == "GEMMFwdOp":
        a, b = tensors
        a = a.T if params.get("trans_a", False) else a
        b = b.T if params.get("trans_b", True) else b
        return [torch.matmul(a, b)]
    if op_name == "MultiHeadAttentionFwdOp":
        q, k, v = tensors
        return [F.scaled_dot_product_attention(q, k, v, is_causal=params.get("is_causal", False),
                                               scale=params.get("scale"),
                                               enable_gqa=q.shape[1] != k.shape[1])]
    raise KeyError(f"no torch equivalent for {op_name}")
