"""Tilesmith: agent-driven, gated rewrites of TorchInductor's generated CUDA wrappers."""

from _tscore import __version__

__all__ = ["__version__"]
