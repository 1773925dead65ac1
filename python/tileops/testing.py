"""Contract calls, rejects, inputs and references, all derived from an op's spec entry: what the
contract tests and `tileops bench` share. Tests own their assertions; this module owns no checks.

For an entry this module gives:
  - `contract_calls(spec)`: the entry's `cases:` rows, its workloads scaled down to a few thousand
    elements, and edge calls from its signature (each Dim at 1, at an odd size and at 0 where the
    spec admits it; batch lists empty, of one 0 and of two dims; each optional input absent; each
    bool param flipped); every one with every dtype the signature declares;
  - `rejects(spec)`: for each constraint, a call that violates it (found by varying one value of
    a valid call at a time), with the message the binder must give;
  - `make_inputs`: tensors for a call (integer inputs inside their declared `range`);
  - `reference` (fp64) and `torch_equivalent` (the inputs' dtype): the entry's `reference:`, a
    Python expression over the inputs and params (torch, F, math in scope) or a module:function.
Every shape comes from the C++ binder (`OpSpec.instantiate`), so a spec change changes the tests.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import itertools
import math
import re

import torch
import torch.nn.functional as F

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
class Call:
    """A concrete call of an op: inputs as None or (dtype, shape), params by name."""

    label: str
    inputs: tuple
    params: dict
    dtypes: str  # "T=bfloat16"
    kind: str = "case"  # case (the entry's cases:), workload (scaled down) or edge

    def id(self) -> str:
        return f"{self.label}-{self.dtypes}" if self.dtypes else self.label


@dataclasses.dataclass(frozen=True)
class Reject:
    """A call the spec refuses, with the text the binder's message must contain."""

    values: dict
    message: str
    params: dict = dataclasses.field(default_factory=dict)
    absent: tuple = ()


# (rtol, atol) of an output against the fp64 reference, from the dtype's rounding and fp32
# accumulation, where the entry's `tolerance:` says nothing else.
TOLERANCES = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1.6e-2),
              torch.float32: (1e-5, 1e-5), torch.float64: (1e-10, 1e-10)}


def tolerance(spec: manifest.OpSpec, dtype: torch.dtype) -> tuple[float, float]:
    name = str(dtype).removeprefix("torch.")
    if name in spec.tolerance:
        return spec.tolerance[name], spec.tolerance[name]
    return TOLERANCES[dtype]


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


# -- contract calls ----------------------------------------------------------------------------

# Scaled-down workloads and edge calls stay under this many input elements (fp64 references of
# every call run on the CPU in CI).
CPU_ELEMENTS = 1 << 16


def _values(spec: manifest.OpSpec, bound) -> tuple[dict, dict]:
    """(Dim and Dims variable values, params) of a bound call."""
    dims = spec.dims(bound)
    kinds = dict(spec.vars)
    values = {k: (list(v) if isinstance(v, tuple) else v) for k, v in dims.items()
              if kinds.get(k) in ("Dim", "Dims")}
    params = {p["name"]: dims[p["name"]] for p in spec.params if p["name"] in dims}
    return values, params


def _try(spec, values, params, absent, dtypes):
    try:
        inputs, bound = spec.instantiate({**values, **dtypes}, params, list(absent))
    except (ValueError, OverflowError):  # BindError (a ValueError) or a size past int64
        return None
    return inputs, bound


def _numel(inputs) -> int:
    return sum(math.prod(d[1]) for d in inputs if d is not None)


def _absent_of(spec, inputs) -> tuple:
    return tuple(t["name"] for t, d in zip(spec.inputs, inputs) if d is None)


def _dtypes_of(text: str) -> dict:
    """{"T": "bfloat16"} from a call's dtype case as the binder writes it ("T=bfloat16")."""
    return dict(kv.split("=") for kv in text.split(",") if kv)


def _copy(values: dict) -> dict:
    return {k: (list(v) if isinstance(v, list) else v) for k, v in values.items()}


def scaled_down(spec: manifest.OpSpec, values: dict, params: dict, absent: tuple, dtypes: dict,
                budget: int = CPU_ELEMENTS) -> dict | None:
    """The variable values shrunk until the inputs hold at most `budget` elements: the largest
    dim first, by 4 or else by 2, keeping only values the spec admits (a constraint can pin a
    dim, as attention's head dim). None when nothing admitted fits."""
    values = _copy(values)
    got = _try(spec, values, params, absent, dtypes)
    if got is None:
        return None
    while _numel(got[0]) > budget:
        slots = [(v, k, None) for k, v in values.items() if isinstance(v, int)]
        slots += [(x, k, i) for k, v in values.items() if isinstance(v, list)
                  for i, x in enumerate(v)]
        progressed = False
        for size, k, i in sorted(slots, key=lambda s: -s[0]):
            if size <= 1:
                continue
            for smaller in (max(1, size // 4), max(1, size // 2)):
                trial = _copy(values)
                if i is None:
                    trial[k] = smaller
                else:
                    trial[k][i] = smaller
                again = _try(spec, trial, params, absent, dtypes)
                if again is not None:
                    values, got, progressed = trial, again, True
                    break
            if progressed:
                break
        if not progressed:
            return None
    return values


def _edge_values(spec: manifest.OpSpec, values: dict):
    """(label, values) variants of a valid call: each Dim at 1, odd, 0; each Dims list empty, [0]
    and two dims."""
    for k, v in values.items():
        if isinstance(v, int):
            for new, tag in ((1, "1"), (v + 1 if v % 2 == 0 else v + 2, "odd"), (0, "0")):
                if new != v:
                    yield f"{k}={tag}", {**values, k: new}
        else:
            for new, tag in (([], "[]"), ([0], "[0]"), ([2, 3], "[2,3]")):
                if new != v:
                    yield f"{k}={tag}", {**values, k: new}


def bool_params(spec: manifest.OpSpec) -> list[str]:
    return [p["name"] for p in spec.params if p["type"] == "bool"]


def _scaled_workloads(spec: manifest.OpSpec, dtypes: dict) -> list[tuple]:
    """(label, values, params, absent inputs) of each workload that scales down to the CPU
    budget (scaled_down), in the entry's order."""
    out = []
    for w in spec.workloads():
        values, params = _values(spec, w["bound"])
        absent = _absent_of(spec, w["inputs"])
        small = scaled_down(spec, values, params, absent, dtypes)
        if small is not None:
            out.append((f"{w['label']}-scaled", small, params, absent))
    return out


def contract_calls(spec: manifest.OpSpec) -> list[Call]:
    """Every contract call of an entry, each dtype case of each, without duplicates."""
    seen, out = set(), []

    def add(label, inputs, params, dtypes, kind):
        key = (tuple(inputs), tuple(sorted(params.items())))
        if key in seen:
            return
        seen.add(key)
        out.append(Call(label, tuple(inputs), dict(params),
                        ",".join(f"{k}={v}" for k, v in dtypes.items()), kind))

    dtype_list = dtype_cases(spec)
    for c in spec.cases():
        add(c["label"], c["inputs"], c["params"], _dtypes_of(c["dtype_case"]), "case")

    bases = _scaled_workloads(spec, dtype_list[0])
    for label, values, params, absent in bases:
        for dt in dtype_list:
            got = _try(spec, values, params, absent, dt)
            if got is not None:
                add(label, got[0], params, dt, "workload")

    if bases:  # edge calls around the first scaled-down workload
        _, values, params, absent = bases[0]
        variants = [(label, v, params, absent) for label, v in _edge_values(spec, values)]
        optional = [t["name"] for t in spec.inputs if t["optional"]]
        for name in optional:
            variants.append((f"no-{name}", values, params, tuple(set(absent) | {name})))
            variants.append((f"with-{name}", values, params, tuple(set(absent) - {name})))
        if optional:
            variants.append(("no-optional", values, params, tuple(optional)))
        flags = bool_params(spec)
        for combo in itertools.product((False, True), repeat=len(flags)) if flags else ():
            flipped = {**params, **dict(zip(flags, combo))}
            tag = ",".join(f"{f}={int(b)}" for f, b in zip(flags, combo))
            variants.append((tag, values, flipped, absent))
        for label, v, p, a in variants:
            for dt in dtype_list:
                got = _try(spec, v, p, a, dt)
                if got is not None and _numel(got[0]) <= 4 * CPU_ELEMENTS:
                    add(label, got[0], p, dt, "edge")
    return out


def with_params(spec: manifest.OpSpec, call: Call, params: dict) -> Call | None:
    """The same call (its variable values, dtypes and absent inputs) under other params, the
    input shapes evaluated again (GEMM's trans flags change them); None where the spec refuses."""
    values, _ = _values(spec, spec.bind(list(call.inputs), call.params))
    got = _try(spec, values, {**call.params, **params}, _absent_of(spec, call.inputs),
               _dtypes_of(call.dtypes))
    if got is None:
        return None
    return Call(call.label, tuple(got[0]), {**call.params, **params}, call.dtypes, call.kind)


def base_call(spec: manifest.OpSpec) -> Call:
    """A small, valid, unremarkable call (the first scaled-down workload, first dtype)."""
    calls = contract_calls(spec)
    return next((c for c in calls if c.kind == "workload"), calls[0])


# -- rejects -----------------------------------------------------------------------------------

def _param_trials(p) -> list:
    t = p["type"].removeprefix("optional[").removesuffix("]")
    if t == "float":
        return [0.0, -1.0, 1e30]
    if t == "int":
        return [0, -1, 1 << 40]
    if t == "bool":
        return [False, True]
    return []


def rejects(spec: manifest.OpSpec) -> list[Reject]:
    """For each constraint, a call violating it, found by changing one value of the base call:
    a Dim to 0, 1, 2, 3, one more or less, or doubled plus one; a Dims list emptied; a param to
    zero, negative or huge. Constraints no such change violates are left out."""
    dt = dtype_cases(spec)[0]
    base = next((w for w in spec.workloads()), None)
    if base is None:
        return []
    values, params = _values(spec, base["bound"])
    absent = _absent_of(spec, base["inputs"])
    small = scaled_down(spec, values, params, absent, dt) or values
    trials = []
    for k, v in small.items():
        options = ([0, 1, 2, 3, 96, v - 1, v + 1, 2 * v + 1] if isinstance(v, int)
                   else [[], [0]])
        trials += [({**small, k: o}, params) for o in options if o != v]
    for p in spec.params:
        trials += [(small, {**params, p["name"]: o}) for o in _param_trials(p)]
    found = []
    for expr, message in spec.constraints:
        want = message or expr
        for vals, ps in trials:
            try:
                spec.instantiate({**vals, **dt}, ps, list(absent))
            except manifest.BindError as e:
                if want in str(e):
                    found.append(Reject(vals, want, ps, absent))
                    break
            except (ValueError, OverflowError, TypeError):
                continue
    return found


# -- inputs ------------------------------------------------------------------------------------

def make_inputs(spec: manifest.OpSpec, inputs, device, seed: int = 0) -> list:
    """Tensors for `inputs` (None or (dtype, shape) per spec input): normal values, integer
    inputs uniform in their declared `range` (else in [0, 16))."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    ranges = [None] * len(spec.inputs)
    if any(t["has_range"] for t in spec.inputs):
        ranges = spec.input_ranges(spec.bind(list(inputs)))
    out = []
    for desc, rng in zip(inputs, ranges):
        if desc is None:
            out.append(None)
            continue
        dtype, shape = TORCH_DTYPES[desc[0]], tuple(desc[1])
        if not dtype.is_floating_point:
            low, high = rng if rng is not None else (0, 16)
            t = torch.randint(low, max(high, low + 1), shape, generator=gen, dtype=dtype)
        else:
            t = torch.randn(shape, generator=gen, dtype=torch.float32).to(dtype)
        out.append(t.to(device))
    return out


LAYOUTS = ("contiguous", "padded", "odd-stride", "permuted", "inner-swapped")


def with_layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values in another memory layout, last dim still contiguous: rows padded to a
    16-byte multiple, rows padded by 3 elements (no 16-byte vectors), the two leading dims
    swapped in memory ("permuted": batch and heads of [B, H, S, D]), or the two dims before the
    last swapped ("inner-swapped": [B, H, S, D] over a [B, S, H, D] buffer, as SDPA's callers and
    a fused QKV projection's views lay it out)."""
    if layout == "contiguous" or t.dim() == 0:
        return t
    if layout == "permuted":
        return t.transpose(0, 1).contiguous().transpose(0, 1) if t.dim() >= 3 else t
    if layout == "inner-swapped":
        return t.transpose(-3, -2).contiguous().transpose(-3, -2) if t.dim() >= 3 else t
    pad = 3 if layout == "odd-stride" else 16
    n = t.shape[-1]
    buf = torch.full((*t.shape[:-1], n + pad), float("nan") if t.is_floating_point() else 0,
                     dtype=t.dtype, device=t.device)
    view = buf[..., :n]
    view.copy_(t)
    return view


def layout_inputs(spec: manifest.OpSpec, tensors: list, layout: str) -> list:
    """Applies `layout` to every input whose spec layout is not `contiguous`."""
    return [t if t is None or info["layout"] == "contiguous" else with_layout(t, layout)
            for info, t in zip(spec.inputs, tensors)]


# -- references --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _reference_function(name: str, text: str, args: tuple[str, ...]):
    path = manifest.reference_path(text)
    if path is not None:
        return getattr(importlib.import_module(path[0]), path[1])
    # A real function (not eval at call time), so torch.compile traces it like any other.
    source = f"def {name}_reference({', '.join(args)}):\n    return {text}\n"
    scope = {"torch": torch, "F": F, "math": math}
    exec(compile(source, f"<{name} reference>", "exec"), scope)  # noqa: S102
    return scope[f"{name}_reference"]


def reference_function(spec: manifest.OpSpec):
    """The entry's `reference:` as a function taking the inputs and params by name, returning a
    tensor or a tuple of them; KeyError where the entry has none."""
    if not spec.reference:
        raise KeyError(f"{spec.file}:{spec.line}: {spec.name}: the entry has no reference:")
    args = tuple(t["name"] for t in spec.inputs) + tuple(p["name"] for p in spec.params)
    return _reference_function(spec.name, spec.reference, args)


def reference_kwargs(spec: manifest.OpSpec, tensors: list, params: dict) -> dict:
    """The reference function's arguments: inputs by name, every param (defaults filled in)."""
    kw = {info["name"]: t for info, t in zip(spec.inputs, tensors)}
    kw.update({p["name"]: p["default_value"] for p in spec.params if not p["required"]})
    kw.update(params)
    return kw


def as_list(result) -> list[torch.Tensor]:
    """A reference's result (a tensor, or a tuple of them) as a list."""
    return [result] if isinstance(result, torch.Tensor) else list(result)


def _evaluate(spec: manifest.OpSpec, tensors: list, params: dict) -> list[torch.Tensor]:
    return as_list(reference_function(spec)(**reference_kwargs(spec, tensors, params)))


def reference_mismatch(spec: manifest.OpSpec) -> str | None:
    """Why the entry's reference does not fit its signature on the entry's base call (fp64, CPU):
    it raises, or gives another number of results, or results of other shapes than the binder
    infers (the outputs, or an in-place op's written inputs); None when it fits."""
    call = base_call(spec)
    tensors = make_inputs(spec, call.inputs, "cpu")
    if spec.outputs:
        want = [tuple(s) for _, s in spec.bind(list(call.inputs), call.params).outputs]
    else:
        want = [tuple(d[1]) for d, t in zip(call.inputs, spec.inputs) if t["mutated"]]
    try:
        got = [tuple(r.shape) for r in reference(spec, tensors, call.params)]
    except Exception as e:  # the reference's own error, named with the call it was given
        return (f"reference fails on {call.id()}: {type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''}")
    if got != want:
        return f"reference on {call.id()} gives shapes {got}; the signature gives {want}"
    return None


def reference(spec: manifest.OpSpec, tensors: list, params: dict) -> list[torch.Tensor]:
    """fp64 results (the outputs, or an in-place op's written inputs' new values): the entry's
    reference evaluated on fp64 copies of the floating-point inputs."""
    up = [t.double() if t is not None and t.is_floating_point() else t for t in tensors]
    return [r.double() for r in _evaluate(spec, up, params)]


def torch_equivalent(spec: manifest.OpSpec, tensors: list, params: dict) -> list[torch.Tensor]:
    """The entry's reference on the inputs as they are (their dtype and device): the eager
    baseline of `tileops bench`."""
    return _evaluate(spec, tensors, params)
