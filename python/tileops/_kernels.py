"""Access to the CUDA launchers (`_tskernels`), with a clear error where they were not built.

`_tskernels` is built only where nvcc was found at build time (TS_BUILD_CUDA), and GEMM and
attention only once their launchers are part of the build. Everything else in tileops (specs,
binding, fake shape inference, references) works without it.

The reference backend (`use_reference_backend()`, for tests on machines without a GPU) swaps in
`_tskernels_ref`: the same functions over the kernels' fp64 CPU references, on CPU tensors.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib


class KernelsNotBuilt(RuntimeError):
    """The CUDA launchers an op needs are not in this installation."""


@functools.lru_cache(maxsize=None)
def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError as e:  # built without nvcc, or a broken install
        return e


_reference = False


def _module():
    return _import("tileops._tskernels_ref" if _reference else "tileops._tskernels")


def reference_backend() -> bool:
    """True while the op layer runs on the CPU references (tensors on the CPU, no streams)."""
    return _reference


@contextlib.contextmanager
def use_reference_backend():
    """Runs ops on `_tskernels_ref` (CPU tensors) inside the block; KernelsNotBuilt when absent."""
    global _reference
    m = _import("tileops._tskernels_ref")
    if isinstance(m, ImportError):
        raise KernelsNotBuilt(f"the reference kernels are not built (_tskernels_ref: {m})")
    previous, _reference = _reference, True
    try:
        yield m
    finally:
        _reference = previous


def available() -> bool:
    return not isinstance(_module(), ImportError)


def built_kernels() -> dict[str, str]:
    """Kernel name -> op, for every kernel compiled into _tskernels ({} when it is not built)."""
    m = _module()
    return {} if isinstance(m, ImportError) else dict(m.kernels())


def launcher(op_name: str, kernel: str):
    """The launch function of `kernel`; KernelsNotBuilt naming the op when it is not built."""
    m = _module()
    if isinstance(m, ImportError):
        raise KernelsNotBuilt(
            f"{op_name}: this tileops was built without its CUDA kernels ({m}). Install the CUDA "
            "toolkit (nvcc for sm_90a; built and tested with 13.0) and reinstall: pip install "
            "--no-build-isolation ./packaging/tileops (nvcc on PATH or at /usr/local/cuda)")
    if kernel not in m.kernels():
        raise KernelsNotBuilt(
            f"{op_name}: kernel '{kernel}' is not built into _tskernels (built: "
            f"{', '.join(sorted(m.kernels())) or 'none'}); its launcher was not part of the build")
    return functools.partial(m.launch, kernel)


@functools.lru_cache(maxsize=None)
def build_id() -> str:
    """First 12 hex digits of the SHA-256 of the built `_tskernels` file ("none" when absent).

    Config indices name entries of the kernels' config tables, which change between builds of
    the same library version; a tuned choice is only meaningful for the build that measured it.
    """
    m = _import("tileops._tskernels")
    path = getattr(m, "__file__", None)
    if isinstance(m, ImportError) or not path:
        return "none"
    with open(path, "rb") as f:  # a few MB, read once per process
        return hashlib.sha256(f.read()).hexdigest()[:12]


def num_configs(kernel: str) -> int:
    m = _module()
    return 0 if isinstance(m, ImportError) else m.num_configs(kernel)


def launch_error_type():
    m = _module()
    return RuntimeError if isinstance(m, ImportError) else m.LaunchError
