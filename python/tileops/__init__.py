"""TileOPs: an operator library for LLM workloads in which every op starts as a YAML spec.

    import tileops
    y = tileops.RMSNormFwdOp(eps=1e-6)(x, weight)      # or: from tileops.ops import RMSNormFwdOp

Each implemented spec entry is an op class of `tileops.ops`, generated from the entry; reaching
one imports torch. `manifest`, `layers` and the command line's spec commands do not need it.
"""

from tileops._core import BindError, SpecError, __version__

from . import manifest
from ._kernels import KernelsNotBuilt, use_reference_backend

__all__ = ["__version__", "manifest", "BindError", "SpecError", "KernelsNotBuilt",
           "use_reference_backend"]


def __getattr__(name: str):
    # tileops.RMSNormFwdOp: the generated classes, loaded (with torch) on first use.
    if name[:1].isupper():
        from . import ops

        if name in ops.CLASSES:
            return ops.CLASSES[name]
    raise AttributeError(f"module 'tileops' has no attribute {name!r}")
