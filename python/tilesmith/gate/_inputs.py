"""The worker's inputs: the call's tensors grouped by shared storage (aliasing, strides and
storage offsets kept), copied into fresh buffers with guard bands on both sides, refilled with the
values of one input class.

    layout = InputLayout(args, device)
    values = layout.values_for("high_magnitude", seed)   # per storage group: uint8 bytes
    args, bufs = layout.materialize(values, canary_seed)  # bufs: (buffer, canary) per group

Also the diagnostics read from a candidate's module after its calls (its CUDA graph runtime and
direct launchers): reported, never part of a verdict.
"""

from __future__ import annotations

import math

import torch


GUARD_BYTES = 256  # per side of every input storage; a multiple of 16 keeps Triton alignment
INPUT_CLASSES = ["given", "normal", "zeros", "high_magnitude", "random_dist", "sparse_spikes"]


class InputLayout:
    """What the call arguments look like: tensors grouped by shared storage (aliasing kept)."""

    def __init__(self, args: list, device: torch.device):
        self.device = device
        self.items = []  # ("tensor", group, dtype, size, stride, offset_elems) | ("value", obj)
        self.groups = []  # [{"nbytes", "dtype", "given": uint8 tensor on device}]
        by_storage: dict = {}
        for a in args:
            if isinstance(a, torch.Tensor):
                st = a.untyped_storage()
                key = (st.data_ptr(), st.nbytes()) if st.nbytes() else ("empty", len(by_storage))
                if key not in by_storage:
                    raw = torch.empty(st.nbytes(), dtype=torch.uint8)
                    if st.nbytes():
                        raw.copy_(torch.empty(0, dtype=torch.uint8).set_(st))
                    by_storage[key] = len(self.groups)
                    self.groups.append({"nbytes": st.nbytes(), "dtype": a.dtype,
                                        "given": raw.to(device)})
                g = by_storage[key]
                self.items.append(("tensor", g, a.dtype, tuple(a.shape), tuple(a.stride()),
                                   a.storage_offset()))
            else:
                self.items.append(("value", a))

    def values_for(self, input_class: str, seed: int) -> list:
        """Per group: the storage bytes (uint8, on device) for one input class."""
        gen = torch.Generator(device=self.device)
        gen.manual_seed(seed)
        out = []
        for g in self.groups:
            dt = g["dtype"]
            if input_class == "given" or not (dt.is_floating_point or dt.is_complex) or g["nbytes"] == 0:
                out.append(g["given"])
                continue
            itemsize = torch.empty((), dtype=dt).element_size()
            n = g["nbytes"] // itemsize
            vals = _class_values(input_class, n, dt, gen, self.device)
            raw = torch.empty(g["nbytes"], dtype=torch.uint8, device=self.device)
            raw[: n * itemsize].copy_(vals.view(torch.uint8))
            raw[n * itemsize:].copy_(g["given"][n * itemsize:])
            out.append(raw)
        return out

    def materialize(self, group_values: list, canary_seed: int):
        """Fresh padded copies: (args list, [(buffer, canary_lo, canary_hi)] per group)."""
        gen = torch.Generator(device=self.device)
        gen.manual_seed(canary_seed)
        bufs = []
        for g, v in zip(self.groups, group_values):
            buf = torch.empty(g["nbytes"] + 2 * GUARD_BYTES, dtype=torch.uint8, device=self.device)
            canary = torch.randint(0, 256, (2 * GUARD_BYTES,), generator=gen, dtype=torch.uint8,
                                   device=self.device)
            buf[:GUARD_BYTES].copy_(canary[:GUARD_BYTES])
            buf[GUARD_BYTES + g["nbytes"]:].copy_(canary[GUARD_BYTES:])
            buf[GUARD_BYTES:GUARD_BYTES + g["nbytes"]].copy_(v)
            bufs.append((buf, canary))
        args = []
        for it in self.items:
            if it[0] == "value":
                args.append(it[1])
                continue
            _, gi, dt, size, stride, off = it
            itemsize = torch.empty((), dtype=dt).element_size()
            t = torch.empty(0, dtype=dt, device=self.device)
            t.set_(bufs[gi][0].untyped_storage(), GUARD_BYTES // itemsize + off, size, stride)
            args.append(t)
        return args, bufs

    def refill(self, bufs, group_values) -> None:
        for g, (buf, _), v in zip(self.groups, bufs, group_values):
            buf[GUARD_BYTES:GUARD_BYTES + g["nbytes"]].copy_(v)


def _graph_runtime_stats(module) -> dict | None:
    """What the search agent's CUDA graph runtime in a candidate did over the gate's calls
    (graphs captured, replays, calls that ran the original and why): diagnostics for the report,
    never part of a verdict. Only plain values are taken; anything else yields None."""
    try:
        runtime = vars(module).get("_ts_graphed_call")
        if type(runtime).__name__ != "_TsGraphedCall":
            return None
        fields = vars(runtime)
        stats = {k: fields[k] for k in ("captures", "handout_captures", "replays")
                 if type(fields.get(k)) is int}
        eager = fields.get("eager_calls")
        if type(eager) is dict:
            stats["eager_calls"] = {str(k)[:80]: v for k, v in eager.items() if type(v) is int}
        if type(fields.get("disabled")) is str:
            stats["disabled"] = fields["disabled"][:300]
        if type(fields.get("graphs")) is list:
            stats["graphs_kept"] = len(fields["graphs"])
        return stats
    except Exception:
        return None


def _direct_launch_stats(module) -> dict | None:
    """Whether the search agent's direct-launch rewrite in a candidate bound its launchers over
    the gate's calls (so the timed calls skipped CachingAutotuner.run) and after how many tries:
    diagnostics for the report, never part of a verdict."""
    try:
        fields = vars(module)
        if "_ts_direct_launchers" not in fields or type(fields.get("_ts_direct_tries")) is not int:
            return None
        direct = fields.get("_ts_direct")
        return {"bound": type(direct) is list, "launchers": len(direct) if type(direct) is list
                else 0, "tries": fields["_ts_direct_tries"]}
    except Exception:
        return None


def _class_values(cls: str, n: int, dt: torch.dtype, gen, device) -> torch.Tensor:
    work = torch.float64 if dt == torch.float64 else torch.float32
    if dt.is_complex:
        work = torch.float64 if dt == torch.complex128 else torch.float32
        n = n * 2

    def u(lo, hi):
        return lo + (hi - lo) * torch.rand((), generator=gen, device=device).item()

    if cls == "normal":
        x = torch.randn(n, generator=gen, device=device, dtype=work)
    elif cls == "zeros":
        x = torch.zeros(n, device=device, dtype=work)
    elif cls == "high_magnitude":
        scale = 1e3 if dt in (torch.float32, torch.float64, torch.complex64, torch.complex128) else 30.0
        x = torch.randn(n, generator=gen, device=device, dtype=work) * scale
    elif cls == "random_dist":
        family = int(torch.randint(0, 3, (), generator=gen, device=device).item())
        if family == 0:  # normal with random mean and spread
            x = torch.randn(n, generator=gen, device=device, dtype=work) * math.exp(u(-3, 1.5)) + u(-3, 3)
        elif family == 1:  # uniform on a random interval
            a = u(-4, 2)
            x = a + (u(0.01, 6)) * torch.rand(n, generator=gen, device=device, dtype=work)
        else:  # heavy tailed: normal / sqrt(uniform), clipped to stay finite in low precision
            den = torch.rand(n, generator=gen, device=device, dtype=work).clamp_min(1e-3).sqrt()
            x = (torch.randn(n, generator=gen, device=device, dtype=work) / den).clamp(-200, 200)
    elif cls == "sparse_spikes":
        x = torch.zeros(n, device=device, dtype=work)
        k = max(1, n // 1000)
        idx = torch.randint(0, max(n, 1), (k,), generator=gen, device=device)
        mag = 10 + 90 * torch.rand(k, generator=gen, device=device, dtype=work)
        sign = torch.randint(0, 2, (k,), generator=gen, device=device).to(work) * 2 - 1
        x[idx] = mag * sign
    else:
        raise ValueError(f"unknown input class {cls!r}")
    if dt.is_complex:
        return torch.view_as_complex(x.view(-1, 2)).to(dt)
    return x.to(dt)
