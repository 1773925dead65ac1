"""Device memory Tilesmith takes next to the user's program, decided before it is taken.

    copies = clone_args(args)            # on the device only while that leaves room, else host
    why = worker_does_not_fit(args, dev)  # None, or a plain sentence for diagnostics()

The gate's worker holds several copies of a graph's inputs on the device: the loaded snapshot,
4 value sets and 3 buffer sets per side for timing (tilesmith.gate.worker), with outputs of the
same order on top. Where that cannot fit in what is free, nothing is evaluated and the graph stays
on Inductor with the figures; the user's own call never pays for Tilesmith's allocations.
"""

from __future__ import annotations

import torch

# Copies of the inputs a worker keeps on the device (snapshot, value sets, buffer sets, and
# room for outputs of the same size).
WORKER_INPUT_COPIES = 12
# The worker's CUDA context, compiled kernels and allocator slack.
WORKER_BASE_BYTES = 1 << 30
# The first call copies its inputs on the device only while they take at most this share of
# the free memory; the rest is the user's call's.
DEVICE_COPY_SHARE = 0.25


def tensor_bytes(args, device_type: str | None = None) -> int:
    """Bytes of the distinct storages the tensors in `args` use (on `device_type`, or all)."""
    seen, total = set(), 0
    for a in args:
        if isinstance(a, torch.Tensor) and (device_type is None or a.device.type == device_type):
            st = a.untyped_storage()
            key = (st.data_ptr(), str(a.device))
            if key not in seen:
                seen.add(key)
                total += st.nbytes()
    return total


def free_bytes(device) -> int | None:
    """Free memory on a CUDA device (what every process left), or None off CUDA."""
    device = torch.device(device)
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    return int(torch.cuda.mem_get_info(device)[0])


def gib(n: float) -> str:
    return f"{n / (1 << 30):.1f} GiB"


def _host_copy(a: torch.Tensor) -> torch.Tensor:
    """A host copy with the same sizes, strides and (relative) storage layout."""
    needed = 1 + sum((s - 1) * st for s, st in zip(a.shape, a.stride())) if a.numel() else 0
    host = torch.empty(needed, dtype=a.dtype)
    if needed:
        host.copy_(torch.as_strided(a, (needed,), (1,)))
    return torch.as_strided(host, a.shape, a.stride())


def copies_go_to_host(on_device: int, free: int | None) -> str | None:
    """Why the first call's copies of `on_device` bytes of inputs go to host memory (a note for
    diagnostics()), or None when a device copy leaves the user's call its room."""
    if free is None or on_device <= DEVICE_COPY_SHARE * free:
        return None
    return (f"memory: the inputs' copies ({gib(on_device)}) went to host memory, not the device "
            f"({gib(free)} free)")


def clone_args(args) -> tuple[list, str | None]:
    """Copies of the call's arguments, and the note of copies_go_to_host when they went there."""
    from torch._inductor.utils import clone_preserve_strides

    devices = {a.device for a in args if isinstance(a, torch.Tensor) and a.device.type == "cuda"}
    note = copies_go_to_host(tensor_bytes(args, "cuda"),
                             min((free_bytes(d) for d in devices), default=None))
    out = []
    with torch.no_grad():
        for a in args:
            if not isinstance(a, torch.Tensor):
                out.append(a)
            elif note and a.device.type == "cuda":
                out.append(_host_copy(a.detach()))
            else:
                out.append(clone_preserve_strides(a.detach()))
    return out, note


def worker_does_not_fit(args, device) -> str | None:
    """Why the gate's worker cannot evaluate this graph on `device` (a sentence), or None."""
    free = free_bytes(device)
    if free is None:
        return None
    inputs = tensor_bytes(args)
    need = WORKER_INPUT_COPIES * inputs + WORKER_BASE_BYTES
    if need <= free:
        return None
    return (f"the gate's worker would need about {gib(need)} of device memory ({WORKER_INPUT_COPIES} "
            f"copies of the {gib(inputs)} of inputs for correctness and timing, plus "
            f"{gib(WORKER_BASE_BYTES)}) and {gib(free)} are free; nothing was evaluated")
