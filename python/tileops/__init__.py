"""TileOPs: an operator library for LLM workloads in which every op starts as a YAML spec."""

from _tscore import __version__

from . import manifest, registry

__all__ = ["__version__", "manifest", "registry"]
