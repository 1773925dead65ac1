"""Where model-written code runs: the sandboxes of the gate's worker and the agent's shell.

Both are ts::proc::Sandbox (bubblewrap): the host's files read-only, homes, /root and the run
cache hidden, no network, a private /tmp, every process gone with the call. This module says what
each needs to see on top of that:

    box = worker_sandbox(job_root, device="cuda")   # or None, with the reason, where it can't run
    readable = python_paths()                       # the interpreter and its packages

The gate's code is read from `gate_code_root()` (and its timing from tileops/timing.py);
`gate_code_digest()` hashes both so the host can tell, before every evaluation, that nothing has
changed them since import.
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
from pathlib import Path

from tilesmith import _core
# Writable space of a worker's private /tmp and /dev/shm: Inductor and Triton compile there.
WORKER_TMP_BYTES = 4 << 30
# Threads count: torch's intra-op pool and CUDA's helpers run dozens per process.
WORKER_PROCESSES = 4096
WORKER_OPEN_FILES = 65536


def import_paths() -> list[str]:
    """The directories on sys.path: where a worker started with this PYTHONPATH imports from."""
    return [p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]


def python_paths() -> list[str]:
    """The interpreter's prefixes, every directory on sys.path, CUDA's home and the library and
    program search paths: what `python -m tilesmith.gate.worker` reads. Bound read-only where a
    hidden home (or the private /tmp) would cover them."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)]
    paths += import_paths()
    for var in ("CUDA_HOME", "CUDA_PATH", "TRITON_PTXAS_PATH"):
        if os.environ.get(var):
            paths.append(os.environ[var])
    # The loader's and the shell's search paths: libraries and tools, never credentials.
    for var in ("LD_LIBRARY_PATH", "PATH"):
        paths += [p for p in os.environ.get(var, "").split(os.pathsep) if os.path.isabs(p)]
    return list(dict.fromkeys(os.path.realpath(p) for p in paths if os.path.exists(p)))


def gpu_devices() -> list[str]:
    """The NVIDIA device nodes a CUDA worker opens."""
    return sorted(glob.glob("/dev/nvidia*") + glob.glob("/dev/nvidia-caps/*"))


def worker_sandbox(job_root: Path, device: str) -> "_core.Sandbox":
    box = _core.Sandbox.untrusted()
    box.hidden = list(box.hidden) + [str(_core.cache_root())]
    box.readable = python_paths()
    box.writable = [str(job_root)]
    if device.startswith("cuda"):
        box.devices = gpu_devices()
    box.tmp_bytes = WORKER_TMP_BYTES
    box.processes = WORKER_PROCESSES
    box.open_files = WORKER_OPEN_FILES
    return box


def sandbox_unavailable() -> str | None:
    """None where the sandbox runs here, else why not (bwrap missing, no user namespaces, ...)."""
    return _core.sandbox_available()


def processes_unbounded(box) -> str | None:
    """None where `box.processes` is enforced, else why not (the sandbox still runs)."""
    return _core.sandbox_processes_bounded(box)


def gate_code_root() -> Path:
    """The installed tilesmith package: the worker imports its code from here."""
    return Path(__file__).resolve().parent


def gate_timing_file() -> Path:
    """tileops/timing.py: the worker times and flushes with it. Found without importing tileops
    (which would import torch)."""
    import importlib.util

    spec = importlib.util.find_spec("tileops")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("tileops is not installed: the gate's worker times with tileops.timing")
    return Path(next(iter(spec.submodule_search_locations))) / "timing.py"


def gate_code_digest(root: Path | None = None, timing: Path | None = None) -> str:
    """SHA-256 over every .py file of the package and the timing module the worker uses
    (relative path and content)."""
    root = root or gate_code_root()
    timing = timing or gate_timing_file()
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(b"tileops/timing.py\0" + timing.read_bytes() + b"\0")
    return h.hexdigest()
