"""The op classes, generated from the manifest: one class per implemented entry.

    from tileops.ops import RMSNormFwdOp           # or tileops.RMSNormFwdOp
    y = RMSNormFwdOp(eps=1e-6)(x, weight)

A class takes its entry's params in `__init__` (in the spec's order, with its defaults; params
after a required one that follows a defaulted one are keyword-only) and its inputs in `forward`
(trailing optional inputs default to None). It returns its outputs, or, for an op that only
writes inputs in place (RoPE), the written inputs. Both methods are generated as source text, as
dataclasses does, so signatures, help() and argument errors read as if the class were written by
hand; everything they do is `Op`'s (op.py).
"""

from __future__ import annotations

import keyword

from . import manifest
from .op import Op


def _method_source(spec: manifest.OpSpec) -> tuple[str, dict]:
    """The source of `__init__` and `forward`, and the defaults it refers to."""
    defaults, init_args, kw_only, seen_default = {}, [], False, False
    for p in spec.params:
        name = p["name"]
        if p["required"]:
            if seen_default and not kw_only:
                init_args.append("*")
                kw_only = True
            init_args.append(name)
        else:
            seen_default = True
            value = p["default_value"]
            defaults[f"_default_{name}"] = tuple(value) if isinstance(value, list) else value
            init_args.append(f"{name}=_default_{name}")
    inputs = [t["name"] for t in spec.inputs]
    optional_tail = len(inputs)
    while optional_tail > 0 and spec.inputs[optional_tail - 1]["optional"]:
        optional_tail -= 1
    forward_args = [n if i < optional_tail else f"{n}=None" for i, n in enumerate(inputs)]
    params = ", ".join(f"{p['name']}={p['name']}" for p in spec.params)
    if spec.outputs:
        body = f"        return self._run({', '.join(inputs)})\n"
    else:  # in place: the written inputs are the results
        written = [t["name"] for t in spec.inputs if t["mutated"]]
        body = (f"        self._run({', '.join(inputs)})\n"
                f"        return {', '.join(written)}\n")
    source = (f"def make(Op):\n"
              f"    def __init__(self{''.join(', ' + a for a in init_args)}):\n"
              f"        Op.__init__(self{', ' if params else ''}{params})\n"
              f"    def forward(self, {', '.join(forward_args)}):\n"
              f"{body}"
              f"    return __init__, forward\n")
    return source, defaults


def op_class(spec: manifest.OpSpec) -> type:
    """The op class of one manifest entry (which must name its kernel)."""
    names = [p["name"] for p in spec.params] + [t["name"] for t in spec.inputs]
    bad = [n for n in names if keyword.iskeyword(n) or n in ("self", "Op")]
    if bad:
        raise manifest.SpecError(f"{spec.file}:{spec.line}: {spec.name}: {', '.join(bad)} cannot "
                                 "name a param or input of a Python op class")
    if not spec.kernels:
        raise manifest.SpecError(f"{spec.file}:{spec.line}: {spec.name}: an implemented entry "
                                 "names its kernel (kernels: [name])")
    source, defaults = _method_source(spec)
    scope = dict(defaults)
    exec(compile(source, f"<tileops op {spec.name}>", "exec"), scope)  # noqa: S102
    init, forward = scope["make"](Op)
    qualname = spec.name
    for fn, name in ((init, "__init__"), (forward, "forward")):
        fn.__qualname__ = f"{qualname}.{name}"
        fn.__module__ = __name__
    doc = spec.doc
    return type(spec.name, (Op,), {
        "__module__": __name__,
        "__qualname__": qualname,
        "__doc__": f"{doc}\n\n{spec.signature}\n(specs/{spec.family}.yaml)".lstrip(),
        "__init__": init,
        "forward": forward,
        "spec": spec,
        "kernel": spec.kernels[0],
        "inputs": tuple(t["name"] for t in spec.inputs),
        "outputs": tuple(t["name"] for t in spec.outputs),
    })


def _implemented() -> dict[str, type]:
    return {spec.name: op_class(spec) for spec in manifest.load().ops
            if spec.status == "implemented"}


CLASSES: dict[str, type] = _implemented()
globals().update(CLASSES)
__all__ = sorted(CLASSES)


def get(name: str) -> type:
    """The class of the implemented op `name`; KeyError naming the implemented ops otherwise."""
    try:
        return CLASSES[name]
    except KeyError:
        raise KeyError(f"no implemented op named {name!r} (implemented: "
                       f"{', '.join(sorted(CLASSES))})") from None
