"""TileOPs: an operator library for LLM workloads in which every op starts as a YAML spec.

    from tileops.norm import RMSNormFwdOp
    y = RMSNormFwdOp(eps=1e-6)(x, weight)

The op modules (norm, softmax, activation, rope, gemm, attention) import torch; `manifest`,
`registry` and the command line's spec commands do not need it.
"""

from tileops._core import BindError, SpecError, __version__

from . import manifest, registry
from ._kernels import KernelsNotBuilt, use_reference_backend

__all__ = ["__version__", "manifest", "registry", "BindError", "SpecError", "KernelsNotBuilt",
           "use_reference_backend"]
