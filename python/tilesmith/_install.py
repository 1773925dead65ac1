"""Loading a confirmed candidate in-process and swapping it into a CompiledFxGraph.

    mod = load_module(text, path, constants_of(cg))
    cg.current_callable = installed_callable(mod, cg, ...)   # one attribute store
    cg.current_callable = original                            # rollback

Inductor's own artifacts are never edited: the candidate lives in Tilesmith's artifact directory,
`source_code`, `cache_key` and the other serialized fields stay as Inductor wrote them. The
candidate's `call` is wrapped in Inductor's input-alignment wrapper (the same indices Inductor used)
and gets the graph's constants as module attributes, exactly as Inductor loads its own module.
"""

from __future__ import annotations

import hashlib
import sys
import types


def rewrite_kinds(text: str) -> tuple:
    """The kinds of search-agent rewrite a candidate's text carries, e.g. ("autotune",
    "cuda_graph"), from the banners of the search agent's rewrite table; ("model",) for a
    candidate with none (written by a model)."""
    from tilesmith._core import agent

    kinds = tuple(k for k, banner in sorted(agent.rewrite_banners().items()) if banner in text)
    return kinds or ("model",)


def constants_of(cg) -> dict:
    from torch._inductor.output_code import CompiledFxGraphConstants

    return CompiledFxGraphConstants().unwrap(cg)


def load_module(text: str, path: str, constants: dict) -> types.ModuleType:
    name = "tilesmith.installed.c" + hashlib.sha256(text.encode()).hexdigest()[:24]
    code = compile(text, path, "exec", dont_inherit=True)
    mod = types.ModuleType(name)
    mod.__file__ = path
    for k, v in constants.items():
        setattr(mod, k, v)
    exec(code, mod.__dict__, mod.__dict__)
    if not callable(getattr(mod, "call", None)):
        raise RuntimeError("the candidate module defines no call(args)")
    sys.modules[name] = mod  # keeps it alive and visible in tracebacks
    return mod


def installed_callable(mod, cg, on_failure, rerun_safe: bool):
    """Inductor's alignment wrapper around the candidate's call, plus a guard: if the installed
    candidate ever raises, the graph goes back to the original at once; the failing call is
    re-run on the original when that is safe (no donated buffers), otherwise the error surfaces
    rather than a silently wrong result."""
    from torch._inductor.utils import align_inputs_from_check_idxs

    aligned = align_inputs_from_check_idxs(mod.call, cg.inputs_to_check, cg.mutated_input_idxs)

    def tilesmith_installed(args):
        saved = list(args) if rerun_safe else None
        try:
            return aligned(args)
        except Exception as e:
            original = on_failure(e)
            if saved is None:
                raise
            return original(saved)

    tilesmith_installed._tilesmith_module = mod
    return tilesmith_installed
