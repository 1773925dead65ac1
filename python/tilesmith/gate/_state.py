"""The worker's snapshots of global state: torch flags and the environment (S8), and the CUDA
driver calls behind the persisting-L2 checks (T6).

    before = _flags()
    ... a candidate call ...
    _flag_changes(before, _flags())     # ["cudnn.benchmark False -> True", ...]
    _restore_flags(before)              # the original runs under the pristine state again

Threads (T2) are snapshotted by the Runner (tilesmith.gate._calls) with the trusted
threading.enumerate.
"""

from __future__ import annotations

import ctypes
import os

import torch


def _flags() -> dict:
    f: dict = {}

    def put(key, fn):
        try:
            f[key] = fn()
        except Exception:  # a flag this build lacks is simply not compared
            pass

    put("matmul.allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32)
    put("matmul.allow_fp16_reduced", lambda: torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)
    put("matmul.allow_bf16_reduced", lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
    put("cudnn.enabled", lambda: torch.backends.cudnn.enabled)
    put("cudnn.benchmark", lambda: torch.backends.cudnn.benchmark)
    put("cudnn.deterministic", lambda: torch.backends.cudnn.deterministic)
    put("cudnn.allow_tf32", lambda: torch.backends.cudnn.allow_tf32)
    put("mkldnn.enabled", lambda: torch.backends.mkldnn.enabled)
    put("float32_matmul_precision", torch.get_float32_matmul_precision)
    put("deterministic_algorithms", torch.are_deterministic_algorithms_enabled)
    put("deterministic_warn_only", torch.is_deterministic_algorithms_warn_only_enabled)
    put("default_dtype", lambda: str(torch.get_default_dtype()))
    put("grad_enabled", torch.is_grad_enabled)
    put("num_threads", torch.get_num_threads)
    put("env", lambda: dict(os.environ))
    return f


def _flag_changes(before: dict, after: dict) -> list[str]:
    changed = []
    for k in sorted(set(before) | set(after)):
        if before.get(k) != after.get(k):
            if k == "env":
                b, a = before.get(k, {}), after.get(k, {})
                keys = sorted(x for x in set(b) | set(a) if b.get(x) != a.get(x))
                changed.append("environment " + ", ".join(keys[:5]))
            else:
                changed.append(f"{k} {before.get(k)!r} -> {after.get(k)!r}")
    return changed


def _restore_flags(snapshot: dict) -> None:
    """Puts changed flags back so the original always runs under the pristine state. Only what
    changed is touched: some setters have side effects (use_deterministic_algorithms rebinds
    torch.manual_seed)."""
    s = snapshot
    setters = {
        "matmul.allow_tf32": lambda v: setattr(torch.backends.cuda.matmul, "allow_tf32", v),
        "matmul.allow_fp16_reduced": lambda v: setattr(
            torch.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction", v),
        "matmul.allow_bf16_reduced": lambda v: setattr(
            torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction", v),
        "cudnn.enabled": lambda v: setattr(torch.backends.cudnn, "enabled", v),
        "cudnn.benchmark": lambda v: setattr(torch.backends.cudnn, "benchmark", v),
        "cudnn.deterministic": lambda v: setattr(torch.backends.cudnn, "deterministic", v),
        "cudnn.allow_tf32": lambda v: setattr(torch.backends.cudnn, "allow_tf32", v),
        "mkldnn.enabled": lambda v: setattr(torch.backends.mkldnn, "enabled", v),
        "float32_matmul_precision": torch.set_float32_matmul_precision,
        "deterministic_algorithms": lambda v: torch.use_deterministic_algorithms(
            v, warn_only=s.get("deterministic_warn_only", False)),
        "deterministic_warn_only": lambda v: torch.use_deterministic_algorithms(
            s.get("deterministic_algorithms", False), warn_only=v),
        "default_dtype": lambda v: torch.set_default_dtype(getattr(torch, v.split(".")[-1])),
        "grad_enabled": torch.set_grad_enabled,
        "num_threads": torch.set_num_threads,
    }
    now = _flags()
    for key, fn in setters.items():
        if key in s and now.get(key) != s[key]:
            try:
                fn(s[key])
            except Exception:
                pass
    if "env" in s and dict(os.environ) != s["env"]:
        os.environ.clear()
        os.environ.update(s["env"])


class _CudaDriver:
    """The two driver calls the timing protocol needs (T6); loaded lazily, CUDA only."""

    CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
    CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1

    def __init__(self):
        self.lib = None
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            return

    def persisting_limit(self) -> int | None:
        if self.lib is None:
            return None
        v = ctypes.c_size_t(0)
        if self.lib.cuCtxGetLimit(ctypes.byref(v), self.CU_LIMIT_PERSISTING_L2_CACHE_SIZE) != 0:
            return None
        return int(v.value)

    def reset_persisting(self) -> None:
        if self.lib is None:
            return
        self.lib.cuCtxSetLimit(self.CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ctypes.c_size_t(0))
        self.lib.cuCtxResetPersistingL2Cache()

    def access_window_bytes(self, stream_handle: int) -> int | None:
        if self.lib is None:
            return None
        value = (ctypes.c_ubyte * 64)()  # CUstreamAttrValue union; window: {ptr, num_bytes, ...}
        rc = self.lib.cuStreamGetAttribute(ctypes.c_void_p(stream_handle),
                                           self.CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, value)
        if rc != 0:
            return None
        return int(ctypes.c_size_t.from_buffer(value, 8).value)
