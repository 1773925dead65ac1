"""The op manifest, parsed and checked by the C++ core (there is no second parser here).

    >>> from tileops import manifest
    >>> gemm = manifest.op("GEMMFwdOp")
    >>> call = gemm.bind([("bfloat16", (1024, 512)), ("bfloat16", (2048, 512))])
    >>> call.outputs
    [('bfloat16', (1024, 2048))]
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from tileops import _core
from tileops._core import BindError, BoundCall, Manifest, OpSpec, SpecError

__all__ = ["BindError", "BoundCall", "Manifest", "OpSpec", "SpecError", "specs_dir", "load", "op"]


def specs_dir() -> Path:
    """The manifest folder: $TILEOPS_SPECS, else the copy inside the package, else the source tree's."""
    env = os.environ.get("TILEOPS_SPECS")
    if env:
        return Path(env)
    packaged = Path(__file__).resolve().parent / "specs"
    if packaged.is_dir():
        return packaged
    return Path(_core.default_manifest_dir())


@functools.lru_cache(maxsize=None)
def _load(path: str) -> Manifest:
    return _core.load_manifest(path)


def load(path: str | os.PathLike | None = None) -> Manifest:
    """Loads (once per path) and returns the manifest; raises SpecError listing every problem."""
    return _load(str(path if path is not None else specs_dir()))


def op(name: str) -> OpSpec:
    """The spec entry named `name`; KeyError with the known names when there is none."""
    found = load().find(name)
    if found is None:
        names = ", ".join(o.name for o in load().ops)
        raise KeyError(f"no op named {name!r} in the manifest (ops: {names})")
    return found


_REFERENCE_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def reference_path(text: str) -> tuple[str, str] | None:
    """(module, function) where an entry's `reference:` is a `module:function` path; None where
    it is an expression."""
    if not _REFERENCE_PATH.fullmatch(text):
        return None
    module, function = text.split(":")
    return module, function


def hardware_profile_for(device_name: str | None) -> str:
    """The roofline profile of a GPU by its name ("NVIDIA H100 80GB HBM3" -> "h100"); "h200"
    (the default profile) for any other GPU or none."""
    name = (device_name or "").upper()
    return "h100" if "H100" in name else "h200"
