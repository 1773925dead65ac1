"""The worker's comparison of a candidate's call with the original's on the same inputs: values
within a dtype's tolerance (NaN and Inf positions exact, integers bitwise), output types, layout
and aliasing, inputs and guard bands after the call, the RNG state.

    Comparer(spreads).structure(ref_call, cand_call, where)   # [(kind, where, detail)]
    Comparer(spreads).values(ref_call, cand_call, where, pristine, layout)
    compare_values(ref, got, spread, "out[0]")                # None, or where and by how much

Also the checks on output storage across calls (T5) and the rough interval that decides when
timing has sampled enough.
"""

from __future__ import annotations

import math

import torch

from tilesmith.gate._calls import Call
from tilesmith.gate._inputs import GUARD_BYTES, InputLayout
from tilesmith.gate._trusted import _TRUSTED


_TOLERANCE = {  # dtype: (rtol, atol as a fraction of the reference's max |value|)
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.complex64: (1e-4, 1e-5),
    torch.complex128: (1e-7, 1e-9),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 4e-3),
}


def _tolerance(dt: torch.dtype):
    if dt in _TOLERANCE:
        return _TOLERANCE[dt]
    if dt.is_floating_point:  # fp8 and friends
        return (1.25e-1, 3e-2)
    return None  # exact


def _bits(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().contiguous().reshape(-1)
    if t.dtype == torch.bool:
        return t.to(torch.uint8)
    return t.view(torch.uint8)


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.numel() == 0:
        return True
    return bool(_TRUSTED["torch.equal"](_bits(a), _bits(b)))


def _max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest finite |a-b| (0 where both are equal non-finite)."""
    if a.numel() == 0 or not (a.dtype.is_floating_point or a.dtype.is_complex):
        return 0.0 if _bitwise_equal(a, b) else math.inf
    w = torch.complex128 if a.dtype.is_complex else torch.float64
    a64, b64 = a.detach().to(w), b.detach().to(w)
    both = torch.isfinite(a64) & torch.isfinite(b64)
    if not bool(both.any()):
        return 0.0
    return float((a64 - b64).abs()[both].max().item())


def _fmt_index(flat: int, shape) -> str:
    idx = []
    for s in reversed(shape):
        idx.append(flat % s if s else 0)
        flat //= s if s else 1
    return "(" + ", ".join(str(i) for i in reversed(idx)) + ")"


def compare_values(ref: torch.Tensor, got: torch.Tensor, spread: float, name: str) -> str | None:
    """None when `got` matches `ref`; else one line saying where and by how much."""
    tol = _tolerance(ref.dtype)
    if ref.numel() == 0:
        return None
    if tol is None:
        if _bitwise_equal(ref, got):
            return None
        diff = (ref != got).reshape(-1)
        i = int(diff.nonzero()[0].item())
        return (f"{name} differs at {_fmt_index(i, ref.shape)} (expected "
                f"{ref.reshape(-1)[i].item()}, got {got.reshape(-1)[i].item()}; "
                f"{int(diff.sum().item())} elements)")
    rtol, atol_frac = tol
    w = torch.complex128 if ref.dtype.is_complex else torch.float64
    r = ref.detach().to(w).reshape(-1)
    g = got.detach().to(w).reshape(-1)
    rn, gn = torch.isnan(r), torch.isnan(g)
    if not bool(_TRUSTED["torch.equal"](rn, gn)):
        k = int((rn != gn).sum().item())
        i = int((rn != gn).nonzero()[0].item())
        return (f"{name} NaN positions differ ({k} elements, first at {_fmt_index(i, ref.shape)}: "
                f"expected {r[i].item():.4g}, got {g[i].item():.4g})")
    ri, gi = torch.isinf(r), torch.isinf(g)
    if not bool(_TRUSTED["torch.equal"](ri, gi)) or not bool(
            _TRUSTED["torch.equal"](r[ri], g[gi])):
        k = int((ri != gi).sum().item())
        return f"{name} Inf positions or signs differ ({k} elements)"
    fin = ~(rn | ri)
    if not bool(fin.any()):
        return None
    rf, gf = r[fin], g[fin]
    scale = float(rf.abs().max().item())
    atol = max(atol_frac * scale, torch.finfo(ref.dtype).tiny if ref.dtype.is_floating_point else 0.0) + spread
    err = (rf - gf).abs()
    allowed = atol + rtol * rf.abs()
    over = err > allowed
    if not bool(over.any()):
        return None
    j = int(torch.argmax((err - allowed)).item())
    pos = int(fin.nonzero()[j].item())
    return (f"{name} max abs err {float(err.max().item()):.3g} > allowed {float(allowed[j].item()):.3g} "
            f"at {_fmt_index(pos, ref.shape)} (expected {rf[j].item():.6g}, got {gf[j].item():.6g}; "
            f"{int(over.sum().item())} of {rf.numel()} elements over, "
            f"rtol {rtol:g}, atol {atol:.3g})")


def _storage_key(t: torch.Tensor):
    st = t.untyped_storage()
    return st.data_ptr() if st.nbytes() else None


def alias_signature(outs, inputs) -> list:
    """Per output: (is input j, shares storage with input j, shares storage with output k)."""
    in_keys = {}
    for j, a in enumerate(inputs):
        if isinstance(a, torch.Tensor):
            k = _storage_key(a)
            if k is not None:
                in_keys.setdefault(k, j)
    seen = {}
    sig = []
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            sig.append(None)
            continue
        ident = next((j for j, a in enumerate(inputs) if o is a), None)
        k = _storage_key(o)
        sig.append((ident, in_keys.get(k) if k is not None else None,
                    seen.get(k) if k is not None else None))
        if k is not None:
            seen.setdefault(k, i)
    return sig


def _describe_alias(s) -> str:
    if s is None:
        return "not a tensor"
    ident, inp, out = s
    if ident is not None:
        return f"input {ident} itself"
    if inp is not None:
        return f"a view of input {inp}"
    if out is not None:
        return f"sharing storage with out[{out}]"
    return "a fresh tensor"


def _same_stride(a: torch.Tensor, b: torch.Tensor) -> bool:
    return all(sa == sb for sa, sb, n in zip(a.stride(), b.stride(), a.shape) if n > 1)


class Comparer:
    """Compares a candidate call with the reference call on the same inputs."""

    def __init__(self, spreads: dict):
        self.spreads = spreads  # output index -> the original's run-to-run max abs diff

    def structure(self, ref: Call, cand: Call, where: str) -> list:
        f = []
        ro, co = ref.outs, cand.outs
        if not isinstance(co, (tuple, list)):
            return [("output_count", where, f"call returned {type(co).__name__}, not a tuple")]
        if len(co) != len(ro):
            return [("output_count", where, f"{len(co)} outputs, the original returns {len(ro)}")]
        for i, (r, c) in enumerate(zip(ro, co)):
            if isinstance(r, torch.Tensor):
                if type(c) is not torch.Tensor:
                    f.append(("output_type", where,
                              f"out[{i}] is {type(c).__module__}.{type(c).__qualname__}, "
                              "not exactly torch.Tensor"))
                    continue
                bad = []
                if c.device != r.device:
                    bad.append(f"device {c.device} != {r.device}")
                if c.dtype != r.dtype:
                    bad.append(f"dtype {c.dtype} != {r.dtype}")
                if tuple(c.shape) != tuple(r.shape):
                    bad.append(f"shape {tuple(c.shape)} != {tuple(r.shape)}")
                elif not _same_stride(c, r):
                    bad.append(f"strides {c.stride()} != {r.stride()}")
                if bad:
                    f.append(("layout", where, f"out[{i}] " + ", ".join(bad)))
            elif type(c) is not type(r) or c != r:
                f.append(("output_count", where, f"out[{i}] is {c!r}, the original returns {r!r}"))
        if f:
            return f
        # Alias structure before storage offsets: an offset that differs because the output
        # lives in another tensor's storage is an aliasing change.
        rs, cs = alias_signature(ro, ref.inputs), alias_signature(co, cand.inputs)
        for i, (a, b) in enumerate(zip(rs, cs)):
            if a != b:
                f.append(("aliasing", where,
                          f"out[{i}] is {_describe_alias(b)}; the original's is {_describe_alias(a)}"))
        if f:
            return f
        for i, (r, c) in enumerate(zip(ro, co)):
            if isinstance(r, torch.Tensor) and c.storage_offset() != r.storage_offset():
                f.append(("layout", where,
                          f"out[{i}] storage offset {c.storage_offset()} != {r.storage_offset()}"))
        return f

    def values(self, ref: Call, cand: Call, where: str, pristine: list, layout: InputLayout) -> list:
        f = []
        for i, (r, c) in enumerate(zip(ref.ready or ref.outs, cand.ready or cand.outs)):
            if isinstance(r, torch.Tensor):
                msg = compare_values(r, c, self.spreads.get(i, 0.0), f"out[{i}]")
                if msg:
                    f.append(("incorrect", where, msg))
        # Inputs and buffers: the state the original leaves them in, exactly where it does not
        # touch them (S3), within tolerance where it updates them (S10).
        for gi, (g, (rb, rc), (cb, cc)) in enumerate(zip(layout.groups, ref.bufs, cand.bufs)):
            n = g["nbytes"]
            lo, hi = GUARD_BYTES, GUARD_BYTES + n
            if not (_TRUSTED["torch.equal"](cb[:lo], cc[:GUARD_BYTES])
                    and _TRUSTED["torch.equal"](cb[hi:], cc[GUARD_BYTES:])):
                k = int((cb[:lo] != cc[:GUARD_BYTES]).sum().item() + (cb[hi:] != cc[GUARD_BYTES:]).sum().item())
                f.append(("stray_write", where,
                          f"{k} guard bytes around input storage {gi} ({self._inputs_of(layout, gi)}) overwritten"))
            ref_changed = not _TRUSTED["torch.equal"](rb[lo:hi], pristine[gi])
            cand_changed = not _TRUSTED["torch.equal"](cb[lo:hi], pristine[gi])
            if not ref_changed and cand_changed:
                f.append(("mutation", where,
                          f"{self._inputs_of(layout, gi)} modified; the original leaves it unchanged"))
            elif ref_changed and not cand_changed:
                f.append(("mutation", where,
                          f"{self._inputs_of(layout, gi)} not updated; the original writes it"))
            elif ref_changed and not any(k == "incorrect" for k, _, _ in f):
                # (when outputs are already wrong, a wrong update follows from them)
                for j, it in enumerate(layout.items):
                    if it[0] == "tensor" and it[1] == gi:
                        msg = compare_values(ref.inputs[j], cand.inputs[j], 0.0, f"input {j}")
                        if msg:
                            f.append(("mutation", where, f"after the call {msg}"))
                            break
        if not _TRUSTED["torch.equal"](ref.rng_cpu, cand.rng_cpu):
            f.append(("rng", where, "CPU generator state after the call differs from the original's"))
        if ref.rng_cuda is not None and not _TRUSTED["torch.equal"](ref.rng_cuda, cand.rng_cuda):
            f.append(("rng", where, "CUDA generator state after the call differs from the original's"))
        return f

    @staticmethod
    def _inputs_of(layout: InputLayout, gi: int) -> str:
        js = [str(j) for j, it in enumerate(layout.items) if it[0] == "tensor" and it[1] == gi]
        return ("input " if len(js) == 1 else "inputs ") + ", ".join(js)


def _fresh_outputs(sig) -> list:
    return [i for i, s in enumerate(sig) if s is not None and s[0] is None and s[1] is None]


def _reused_storage(prev_outs, outs, idxs) -> int | None:
    if prev_outs is None:
        return None
    prev = {_storage_key(o) for o in prev_outs if isinstance(o, torch.Tensor)}
    prev.discard(None)
    for i in idxs:
        if _storage_key(outs[i]) in prev:
            return i
    return None


def _rough_half_width(samples: dict) -> float:
    """Half-width (log space) of the median's ~95% order-statistic interval, normal
    approximation of the binomial; only for deciding when to stop sampling."""
    n = len(samples["A"])
    if n < 8:
        return math.inf
    lr = sorted(math.log(b / a) for a, b in zip(samples["A"], samples["B"]) if a > 0 and b > 0)
    if len(lr) < 8:
        return math.inf
    n = len(lr)
    k = max(0, int(math.floor(n / 2 - 1.96 * math.sqrt(n) / 2)) - 1)
    return (lr[n - 1 - k] - lr[k]) / 2
