"""Which Inductor graphs Tilesmith may optimize.

Decided inside the inner-compile hook, after compile_fx_inner returned (so after post_compile).
Eligible: a raw single-GPU CUDA Python wrapper (`CompiledFxGraph`), whatever it embeds: Triton
kernels, generated CUDA templates, extern library calls, or a mix. Everything else stays on
ordinary Inductor, with every reason that applies:

    not a CompiledFxGraph (no-op graph, async/AOT output) | dynamic shapes | mutates inputs |
    mixed devices | CPU graph (unless admitted for CI) | multi-GPU or collectives |
    CUDA-graph-wrapped | cpp_wrapper / fx_wrapper | already wrapped | opaque state |
    compiled autograd | a code line naming Inductor's cache dir
"""

from __future__ import annotations

import os

import torch

ALIGN_WRAPPER_QUALNAME = "align_inputs_from_check_idxs.<locals>.run"
INDUCTOR_MODULE_PREFIX = "torch._inductor.runtime.compile_tasks."


def cpu_admitted() -> bool:
    """CPU graphs are optimized only when TILESMITH_ALLOW_CPU=1 (CI); CUDA is the only default."""
    return os.environ.get("TILESMITH_ALLOW_CPU", "") == "1"


def is_inductor_callable(fn) -> bool:
    """Inductor's own entry point: the module's `call` (a function or Runner.call) or the
    input-alignment wrapper around it."""
    if fn is None:
        return False
    if getattr(fn, "__qualname__", "") == ALIGN_WRAPPER_QUALNAME:
        return True
    module = getattr(fn, "__module__", "") or ""
    return module.startswith(INDUCTOR_MODULE_PREFIX) and getattr(fn, "__name__", "") == "call"


def _symbolic(ex) -> list[str]:
    from torch._inductor.utils import is_symbolic

    found = []
    for i, a in enumerate(ex):
        try:
            if is_symbolic(a):
                found.append(f"input {i}")
        except Exception:
            pass
    return found


def _tensor_devices(ex) -> set[str]:
    out = set()
    for a in ex:
        if isinstance(a, torch.Tensor):
            out.add(a.device.type)
    return out


def check(out, gm, ex, fx_kwargs: dict, *, allow_cpu: bool) -> tuple[bool, list[str], str]:
    """(eligible, reasons, device type) for the output of compile_fx_inner."""
    from torch._inductor.output_code import CompiledFxGraph

    from . import _identity

    if type(out) is not CompiledFxGraph:
        what = type(out).__name__
        if what == "function" or not hasattr(out, "source_code"):
            return False, [f"not a Python-wrapper graph ({what}: a no-op graph has no kernels)"], ""
        return False, [f"not a Python-wrapper graph ({what})"], ""

    reasons: list[str] = []
    source = out.source_code or ""
    cfg = torch._inductor.config

    if fx_kwargs.get("cpp_wrapper") or cfg.cpp_wrapper or "cpp_wrapper_src =" in source:
        reasons.append("cpp_wrapper graph (only the Python wrapper is optimized)")
    if fx_kwargs.get("fx_wrapper"):
        reasons.append("fx_wrapper graph")
    if fx_kwargs.get("aot_mode"):
        reasons.append("AOTInductor graph")

    cudagraphs = fx_kwargs.get("cudagraphs")
    wrapped_cg = getattr(out.current_callable, "__qualname__", "").startswith("cudagraphify")
    if (cudagraphs is not None and bool(cudagraphs)) or cfg.triton.cudagraphs or wrapped_cg:
        reasons.append("CUDA-graph-wrapped (mode='reduce-overhead'/'max-autotune' or "
                       "triton.cudagraphs)")

    symbolic = _symbolic(ex)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"] if gm is not None else []
    sym_placeholders = [n.name for n in placeholders
                        if isinstance(n.meta.get("val"), torch.SymInt)]
    if symbolic or sym_placeholders or getattr(out, "guards_expr", None):
        what = ", ".join(symbolic + sym_placeholders) or f"guards {out.guards_expr}"
        reasons.append(f"dynamic shapes ({what})")

    mutated = sorted(getattr(out, "mutated_input_idxs", ()) or ())
    if mutated or getattr(out, "mutated_inputs", None):
        reasons.append(f"mutates its inputs (indices {mutated})")

    device_types = set(getattr(out, "device_types", ()) or ()) | _tensor_devices(ex)
    device = ""
    if len(device_types) > 1:
        reasons.append(f"mixed devices ({', '.join(sorted(device_types))})")
    elif device_types == {"cuda"}:
        device = "cuda"
        if "empty_strided_cpu(" in source or "cpp_fused_" in source:
            reasons.append("mixed devices (CPU kernels or buffers in a CUDA graph)")
    elif device_types == {"cpu"}:
        if allow_cpu:
            device = "cpu"
        else:
            reasons.append("CPU graph (CUDA is the only target; TILESMITH_ALLOW_CPU=1 admits "
                           "CPU graphs for CI)")
    elif not device_types:
        reasons.append("no device (the graph has no tensors)")
    else:
        reasons.append(f"unsupported device {', '.join(sorted(device_types))}")

    idxs = set(getattr(out, "device_idxs", ()) or ())
    if len(idxs) > 1:
        reasons.append(f"multi-GPU (devices {sorted(idxs)})")
    if "_c10d_functional" in source or "empty_strided_p2p(" in source:
        reasons.append("multi-GPU (collectives in the graph)")
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            reasons.append(f"multi-GPU (distributed run, world size {dist.get_world_size()})")
    except Exception:
        pass

    if not is_inductor_callable(out.current_callable):
        reasons.append("already wrapped (the graph's callable is not Inductor's own)")
    if getattr(out, "_wrap_compiled_regions", False):
        reasons.append("already wrapped (compiled regions are wrapped)")
    if getattr(out, "torchbind_constants", None) or getattr(out, "opaque_value_type_classes", None):
        reasons.append("opaque state (torchbind or opaque constants)")
    if getattr(out, "frozen_param_names", None):
        reasons.append("opaque state (frozen parameters)")
    if torch._dynamo.config.compiled_autograd:
        reasons.append("compiled autograd")
    if "def call(" not in source and "call = " not in source:
        reasons.append("the wrapper defines no call(args)")
    named = _identity.code_lines_naming_cache_dir(source)
    if named:
        reasons.append(f"the wrapper's code names Inductor's cache dir ({named[0][:80]})")
    return not reasons, reasons, device
