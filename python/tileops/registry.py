"""Implementations register here; `tileops validate` compares the registry with the manifest.

An op class registers itself with `@register(kernels=[...])`. What the validator checks against
the spec is read from the class itself: its inputs are the parameters of `forward` (in order),
its params those of `__init__` with their defaults, its outputs the `outputs` class attribute.
A class without those methods may declare `inputs` and `params` (name -> default) directly.
"""

from __future__ import annotations

import importlib
import inspect

_REGISTRY: dict[str, type] = {}

# The modules holding the built-in op classes; importing them registers the ops.
BUILTIN_MODULES = ("tileops.norm", "tileops.softmax", "tileops.activation", "tileops.rope",
                   "tileops.gemm", "tileops.attention")


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Required()
REQUIRED = _REQUIRED


def _signature_names(fn) -> list[inspect.Parameter]:
    ps = list(inspect.signature(fn).parameters.values())
    if ps and ps[0].name == "self":
        ps = ps[1:]
    for p in ps:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{fn.__qualname__}: *args/**kwargs cannot be checked against a spec")
    return ps


def register(kernels: list[str]):
    def decorate(cls: type) -> type:
        cls.kernels = list(kernels)
        if "forward" in vars(cls):
            cls.inputs = tuple(p.name for p in _signature_names(cls.forward))
        if "__init__" in vars(cls):
            cls.params = {p.name: (_REQUIRED if p.default is p.empty else p.default)
                          for p in _signature_names(cls.__init__)}
        _REGISTRY[cls.__name__] = cls
        return cls

    return decorate


def load_builtin_ops() -> None:
    """Imports every built-in op module (registering its classes)."""
    for name in BUILTIN_MODULES:
        importlib.import_module(name)


def get(name: str) -> type | None:
    return _REGISTRY.get(name)


def classes() -> dict[str, type]:
    return dict(sorted(_REGISTRY.items()))


def _canonical_default(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)


def entry(cls: type) -> dict:
    """One class in the form the C++ validator takes."""
    params = [(p, "" if d is _REQUIRED else _canonical_default(d)) for p, d in cls.params.items()]
    return {
        "name": cls.__name__,
        "inputs": list(cls.inputs),
        "outputs": list(cls.outputs),
        "params": params,
        "kernels": list(cls.kernels),
    }


def entries() -> list[dict]:
    """The registry in the form the C++ validator takes."""
    return [entry(cls) for _, cls in sorted(_REGISTRY.items())]
