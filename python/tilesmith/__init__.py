"""Tilesmith: agent-driven, gated rewrites of TorchInductor's generated CUDA wrappers.

    import tilesmith
    m = tilesmith.compile(model, example_inputs=(x,), agent_model="gpt-5")
    y = m(x)                      # first call: each eligible graph is optimized, then installed
    tilesmith.benchmarks(m)       # (Benchmark(kind="forward", speedup=1.3, ...), ...)
    tilesmith.diagnostics(m)      # every graph seen, eligible or not, and why
"""

from tilesmith._core import __version__

from ._api import benchmarks, compile, diagnostics, run_info
from ._session import Benchmark, GraphDiagnostic

__all__ = ["__version__", "compile", "diagnostics", "benchmarks", "run_info", "Benchmark",
           "GraphDiagnostic"]
