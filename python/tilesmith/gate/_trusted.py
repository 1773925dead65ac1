"""The worker's trusted references: the clocks, events, comparison and output functions it relies
on, captured at import, before any candidate code runs.

    _TRUSTED["torch.equal"]       # the object the name held at capture
    _rebaseline()                 # once the (trusted) original wrapper is imported
    _tampered()                   # names that now resolve to another object (reward hack T4)

tilesmith.gate.worker imports this module before anything else, and nothing here imports
candidate code: what the worker later calls through these names is what was there before the
candidate could rebind it. The timing code calls the captured functions directly, never
attribute lookups a candidate could redirect between the checks.
"""

from __future__ import annotations




# Trusted references: captured before anything else (and before any candidate import).
import time as _time

_perf_counter = _time.perf_counter
_monotonic = _time.monotonic
_process_time = _time.process_time

import gc  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import threading  # noqa: E402

import torch  # noqa: E402

try:  # rebinds torch.manual_seed and friends at import: do it before anything is captured
    import torch._dynamo  # noqa: E402,F401
except Exception:  # pragma: no cover - a torch without dynamo still runs plain wrappers
    pass

import tileops.timing  # noqa: E402  (the L2 flush the timing calls; tilesmith-ai requires tileops)

_json_dumps = json.dumps
_os_write = os.write
_thread_enumerate = threading.enumerate

# Names checked for identity after the candidate's import and after each of its calls.
_TRUSTED_NAMES = [
    "time.perf_counter", "time.monotonic", "time.time", "time.perf_counter_ns",
    "time.process_time",
    "torch.cuda.synchronize", "torch.cuda.Event", "torch.cuda.Event.record",
    "torch.cuda.Event.elapsed_time", "torch.cuda.Event.synchronize",
    "torch.cuda.current_stream", "torch.cuda.empty_cache",
    "torch.allclose", "torch.equal", "torch.isnan", "torch.isinf", "torch.isfinite",
    "torch.abs", "torch.where", "torch.manual_seed", "torch.get_rng_state",
    "torch.set_rng_state", "torch.cuda.get_rng_state", "torch.cuda.set_rng_state",
    "torch.as_strided", "torch.empty", "torch.Tensor.__eq__", "torch.Tensor.__ne__",
    "torch.Tensor.abs", "torch.Tensor.max", "torch.Tensor.clone", "torch.Tensor.copy_",
    "torch.Tensor.to", "torch.Tensor.cpu", "torch.Tensor.untyped_storage",
    "torch.Tensor.data_ptr", "torch.Tensor.stride", "torch.Tensor.size",
    "torch.Tensor.storage_offset", "torch.Tensor.view", "torch.Tensor.contiguous",
    "torch.Tensor.reshape", "torch.Tensor.double", "torch.Tensor.item",
    "torch.Tensor.set_", "torch.Tensor.fill_", "torch.Tensor.any", "torch.Tensor.sum",
    "json.dumps", "os.write", "threading.enumerate", "gc.collect",
    "tileops.timing.flush_buffer", "tileops.timing.flush_l2",
]


def _resolve(name: str):
    parts = name.split(".")
    obj = {"time": _time, "torch": torch, "json": json, "os": os, "threading": threading,
           "gc": gc, "tileops": tileops}[parts[0]]
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


_TRUSTED = {n: _resolve(n) for n in _TRUSTED_NAMES}
# What the tamper check compares with: the captured objects, re-read once the (trusted) original
# wrapper has been imported, since its imports may legitimately rebind some of them.
_BASELINE = dict(_TRUSTED)


def _rebaseline() -> list:
    global _BASELINE
    now = {}
    for n in _TRUSTED_NAMES:
        try:
            now[n] = _resolve(n)
        except AttributeError:
            pass
    changed = [n for n in _TRUSTED_NAMES if now.get(n) is not _BASELINE.get(n)]
    _BASELINE = now
    return changed
# The timing code calls these captured functions, never attribute lookups a candidate could
# redirect between our checks.
_event_record = _TRUSTED["torch.cuda.Event.record"]
_event_elapsed = _TRUSTED["torch.cuda.Event.elapsed_time"]
_event_synchronize = _TRUSTED["torch.cuda.Event.synchronize"]


def _tampered() -> list[str]:
    out = []
    for name, obj in _BASELINE.items():
        try:
            now = _resolve(name)
        except AttributeError:
            out.append(name)
            continue
        if now is not obj:
            out.append(name)
    return out
