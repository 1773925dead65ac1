"""Implementations register here; `tileops validate` compares the registry with the manifest.

An op class registers itself with `@register(kernels=[...])`; its `inputs`, `outputs` and
`params` (name -> default) class attributes are what the validator checks against the spec.
"""

from __future__ import annotations

_REGISTRY: dict[str, type] = {}


def register(kernels: list[str]):
    def decorate(cls: type) -> type:
        cls.kernels = list(kernels)
        _REGISTRY[cls.__name__] = cls
        return cls

    return decorate


def _canonical_default(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value).replace("e-0", "e-0")
    return str(value)


def entries() -> list[dict]:
    """The registry in the form the C++ validator takes."""
    out = []
    for name, cls in sorted(_REGISTRY.items()):
        params = [(p, "" if d is _REQUIRED else _canonical_default(d)) for p, d in cls.params.items()]
        out.append(
            {
                "name": name,
                "inputs": list(cls.inputs),
                "outputs": list(cls.outputs),
                "params": params,
                "kernels": list(cls.kernels),
            }
        )
    return out


class _Required:
    def __repr__(self) -> str:
        return "<required>"


_REQUIRED = _Required()
REQUIRED = _REQUIRED
