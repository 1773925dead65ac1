"""TileOPs: an operator library for LLM workloads in which every op starts as a YAML spec."""

from _tscore import __version__

__all__ = ["__version__"]
