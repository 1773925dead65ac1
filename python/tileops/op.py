"""The op layer: one Python class per spec entry, checked by the C++ binder on every call.

    from tileops.norm import RMSNormFwdOp
    norm = RMSNormFwdOp(eps=1e-6)     # params as the spec declares them, in order
    y = norm(x, weight)               # shapes and dtype inferred from the tensors at call time

A call: (1) binds the tensors' dtypes, shapes and strides to the spec (`tileops._core`'s binder;
BindError with its precise message on mismatch), (2) allocates the outputs with torch, (3) picks
a kernel config (the launcher's default, or with `request_tune()` the fastest config for this
shape, measured once and kept on disk), (4) launches on the current stream through `tileops._tskernels`
(pointers, sizes, strides; no libtorch). After the first call of a shape nothing in that path
allocates (other than torch's output allocation) or synchronizes, so calls can be captured in a
CUDA graph.

Under torch.compile the call is one `torch.ops.tileops.<OpName>` custom op whose fake
implementation is the spec's shape inference through the same binder, so
`torch.compile(fullgraph=True)` traces it without a graph break. The instance is found again by a
string key (dynamo bakes strings in as constants), as TileOPs' compile boundary does.
"""

from __future__ import annotations

import itertools
import warnings
import weakref

import torch

from tileops._core import __version__

from . import _kernels, manifest, timing, tune

TORCH_DTYPES = {
    "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool,
    "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2,
}
DTYPE_NAMES = {v: k for k, v in TORCH_DTYPES.items()}
KERNEL_DTYPE_CODES = {torch.float16: 0, torch.bfloat16: 1, torch.float32: 2, torch.int64: 3}


def kernel_tensor(t: torch.Tensor) -> tuple:
    """A tensor in the kernels' calling convention: (address, type code, sizes, strides)."""
    return (t.data_ptr(), KERNEL_DTYPE_CODES[t.dtype], tuple(t.shape), tuple(t.stride()))

# Autotune verification tolerance per dtype: configs differ only in reduction order.
_TUNE_TOL = {torch.float16: 4e-3, torch.bfloat16: 3e-2, torch.float32: 1e-4}

_INSTANCES: "weakref.WeakValueDictionary[str, Op]" = weakref.WeakValueDictionary()
_COUNTER = itertools.count()
_LIBRARY = None
_CUSTOM_OPS: dict[str, object] = {}
_DEVICE_NAMES: dict[int, str] = {}


def tensor_arg(t: torch.Tensor) -> tuple:
    """The binder's view of a tensor: (dtype, shape, strides in elements, byte address); the
    address lets it refuse an in-place write into memory another input shares."""
    return (DTYPE_NAMES.get(t.dtype, str(t.dtype)), tuple(t.shape), tuple(t.stride()),
            t.data_ptr())


def _fake_arg(t: torch.Tensor) -> tuple:
    # Under fake tensors with dynamic dims, int() specializes (static shapes are promised only).
    return (DTYPE_NAMES.get(t.dtype, str(t.dtype)), tuple(int(d) for d in t.shape),
            tuple(int(s) for s in t.stride()))


def rows_of(t: torch.Tensor) -> tuple[int, int] | None:
    """(rows, row stride) of t viewed as [prod(shape[:-1]), shape[-1]] with a uniform row stride,
    or None when its leading dims cannot be collapsed into one stride."""
    cols = t.shape[-1] if t.dim() else 1
    rows, stride = 1, None
    for size, st in zip(reversed(t.shape[:-1]), reversed(t.stride()[:-1])):
        if size == 1:
            continue
        if stride is None:
            stride = st
        elif st != stride * rows:
            return None
        rows *= size
    if rows == 0:
        return 0, cols
    return rows, (stride if stride is not None else cols)


def tune_version() -> str:
    """What tuned choices are keyed by besides the device: the library version, the kernels'
    build (a rebuilt config table never serves an index measured on another one) and the timing
    method (a choice timed another way is retuned)."""
    return f"{__version__}+{_kernels.build_id()}+{timing.METHOD}"


def device_name(device: torch.device) -> str:
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _DEVICE_NAMES:
        _DEVICE_NAMES[index] = torch.cuda.get_device_name(index)
    return _DEVICE_NAMES[index]


_PARAM_SCHEMA = {"bool": "bool", "float": "float", "int": "int", "optional[float]": "float?",
                 "optional[int]": "int?", "optional[bool]": "bool?", "list[int]": "int[]"}


def _schema_type(param_type: str) -> str:
    if param_type in _PARAM_SCHEMA:
        return _PARAM_SCHEMA[param_type]
    if param_type.startswith("enum["):
        return "str"
    raise TypeError(f"no torch.library schema type for spec param type '{param_type}'")


def custom_op_schema(spec: manifest.OpSpec) -> str:
    """`RMSNormFwdOp(Tensor x, Tensor weight, float eps, str key) -> Tensor`, from the spec."""
    aliases = iter("abcdefghijklmnop")
    args = []
    for t in spec.inputs:
        ty = f"Tensor({next(aliases)}!)" if t["mutated"] else "Tensor"
        if t["optional"]:
            ty += "?"
        args.append(f"{ty} {t['name']}")
    for p in spec.params:
        args.append(f"{_schema_type(p['type'])} {p['name']}")
    args.append("str key")
    n = len(spec.outputs)
    ret = "()" if n == 0 else "Tensor" if n == 1 else "(" + ", ".join(["Tensor"] * n) + ")"
    return f"{spec.name}({', '.join(args)}) -> {ret}"


def _custom_op_for(cls: type, spec: manifest.OpSpec):
    """torch.ops.tileops.<name>, defined once per op class (at its first instance)."""
    global _LIBRARY
    name = spec.name
    if name in _CUSTOM_OPS:
        return _CUSTOM_OPS[name]
    if _LIBRARY is None:
        _LIBRARY = torch.library.Library("tileops", "FRAGMENT")
    n_in, param_names = len(spec.inputs), [p["name"] for p in spec.params]

    def split(args):
        return args[:n_in], dict(zip(param_names, args[n_in:n_in + len(param_names)])), args[-1]

    def eager(*args):
        tensors, params, key = split(args)
        inst = _INSTANCES.get(key)
        if inst is None:  # the traced instance is gone: an equivalent one does the same work
            inst = cls(**params)
        return inst._eager(tensors)

    def fake(*args):
        tensors, params, _ = split(args)
        call = spec.bind([None if t is None else _fake_arg(t) for t in tensors], params)
        device = next(t.device for t in tensors if t is not None)
        outs = [torch.empty(shape, dtype=TORCH_DTYPES[dt], device=device)
                for dt, shape in call.outputs]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    _LIBRARY.define(custom_op_schema(spec))
    _LIBRARY.impl(name, eager, "CUDA")
    _LIBRARY.impl(name, eager, "CPU")  # raises the op's own "needs CUDA tensors" error
    torch.library.register_fake(f"tileops::{name}", fake, lib=_LIBRARY)
    _CUSTOM_OPS[name] = getattr(torch.ops.tileops, name).default
    return _CUSTOM_OPS[name]


class Op:
    """Base of every op class. A subclass declares `__init__(self, <params per spec>)` calling
    `super().__init__(...)`, `forward(self, <inputs per spec>)` calling `self._run(...)` and the
    `kernel` it launches; every kernel takes the bound call in one calling convention."""

    kernel: str = ""
    # Whether the kernel reads each `rows`-layout input as [rows, last dim] with one row stride
    # (norms, softmax, GEMM); one that takes every stride (attention, RoPE) sets it False.
    collapse_rows = True
    kernels: list[str] = []
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    params: dict = {}

    def __init__(self, **params):
        cls = type(self)
        self.spec = manifest.op(cls.__name__)
        self.param_values = dict(params)
        self._param_tuple = tuple(params.values())
        self._tune = False
        self._chosen: dict[str, int] = {}
        self._launcher = None
        self._launcher_is_reference = False
        self.key = f"{cls.__name__}#{next(_COUNTER)}"
        _INSTANCES[self.key] = self
        self._torch_op = _custom_op_for(cls, self.spec)
        self._rows_inputs = frozenset(
            i for i, t in enumerate(self.spec.inputs) if t["layout"] == "rows"
        ) if cls.collapse_rows else frozenset()

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={v!r}" for k, v in self.param_values.items())
        return f"{type(self).__name__}({ps})"

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # -- tuning ------------------------------------------------------------------------------

    def request_tune(self, enabled: bool = True) -> "Op":
        """Autotune over the kernel's configs on the first call of each shape (not inside a
        CUDA-graph capture), keeping the choice on disk keyed by device, shape, dtype, library
        version and kernel build (tileops.tune)."""
        self._tune = bool(enabled)
        return self

    def chosen_configs(self) -> dict[str, int]:
        """Tuned configs this instance uses, by tune key."""
        return dict(self._chosen)

    def tune_key(self, tensors) -> str:
        parts = []
        for t in tensors:
            if t is None:
                parts.append("-")
            else:
                flags = ("c" if t.is_contiguous() else "s") + ("a" if t.data_ptr() % 16 == 0 else "u")
                parts.append(f"{DTYPE_NAMES.get(t.dtype)}[{','.join(map(str, t.shape))}]{flags}")
        ps = ",".join(f"{k}={v!r}" for k, v in self.param_values.items())
        return f"{type(self).__name__}|{';'.join(parts)}|{ps}"

    def _config_for(self, call, tensors, outs, stream, device) -> int:
        if not self._tune or _kernels.reference_backend():
            return -1
        key = self.tune_key(tensors)
        cfg = self._chosen.get(key)
        if cfg is not None:
            return cfg
        cache = tune.cache_for(device_name(device), tune_version())
        cfg = cache.get(key)
        if cfg is None:
            if torch.cuda.is_current_stream_capturing():
                return -1  # no timing inside a capture; the default config is captured
            cfg, us, tried = self._autotune(call, tensors, outs, stream)
            if tried:
                cache.put(key, cfg, us, tried)
        self._chosen[key] = cfg
        return cfg

    def _autotune(self, call, tensors, outs, stream):
        n = _kernels.num_configs(self.kernel)
        mutated = [t["mutated"] for t in self.spec.inputs]

        def fresh():
            return [t.clone() if m and t is not None else t for t, m in zip(tensors, mutated)]

        def results(ins, o):
            return [t for t, m in zip(ins, mutated) if m and t is not None] + list(o)

        ref_in = fresh()
        self._launch(call, ref_in, outs, -1, stream)
        reference = [r.clone() for r in results(ref_in, outs)]
        launch_error = _kernels.launch_error_type()
        tried: dict[int, float] = {}
        device = reference[0].device if reference else None
        try:
            flush = timing.flush_buffer(device)
        except torch.cuda.OutOfMemoryError:  # a full device still gets tuned, L2 warm
            warnings.warn(f"{type(self).__name__}: no room on the device for the "
                          f"{timing.FLUSH_BYTES >> 20} MiB L2 flush; configs timed with a warm L2")
            flush = torch.zeros(1, device=device or "cuda")
        for cfg in range(n):
            ins = fresh()
            try:
                self._launch(call, ins, outs, cfg, stream)
            except launch_error:
                continue  # this config does not serve this shape
            ok = all(torch.allclose(r.float(), e.float(), rtol=_TUNE_TOL.get(r.dtype, 1e-4),
                                    atol=_TUNE_TOL.get(r.dtype, 1e-4), equal_nan=True)
                     for r, e in zip(results(ins, outs), reference))
            if not ok:
                warnings.warn(f"{type(self).__name__}: config {cfg} disagrees with the default "
                              "config on this shape; not a tuning candidate")
                continue
            tried[cfg] = self._time_config(call, ins, outs, cfg, stream, flush)
        if not tried:
            return -1, 0.0, {}
        best = min(tried, key=tried.get)
        return best, tried[best], tried

    def _time_config(self, call, ins, outs, cfg, stream, flush, reps: int = 20) -> float:
        """Median microseconds of one launch, timed as `tileops bench` times (timing.py: L2
        flushed, host queued ahead), so configs of microsecond kernels rank by their own time."""
        us = timing.time_runs(lambda: self._launch(call, ins, outs, cfg, stream), reps, flush,
                              warmup=1, host_lead_cycles=10_000_000)
        return us[len(us) // 2]

    # -- calls -------------------------------------------------------------------------------

    def bind(self, tensors, outputs=None):
        """The spec's view of a call (with the caller's output buffers, when it gives them):
        raises BindError with the binder's message."""
        args = []
        for name, t in zip(self.inputs, tensors):
            if t is None:
                args.append(None)
            elif isinstance(t, torch.Tensor):
                args.append(tensor_arg(t))
            else:
                raise TypeError(f"{type(self).__name__}: {name}: expected a torch.Tensor or None, "
                                f"got {type(t).__name__}")
        out_args = None
        if outputs is not None:
            for t in outputs:
                if not isinstance(t, torch.Tensor):
                    raise TypeError(f"{type(self).__name__}: outputs: expected torch.Tensors, "
                                    f"got {type(t).__name__}")
            out_args = [tensor_arg(t) for t in outputs]
        return self.spec.bind(args, self.param_values, out_args)

    def eval_roofline(self, *tensors, profile: str | None = None) -> dict:
        """The spec's roofline for this call, after the binder checks it (BindError on a
        mismatch; tensors may be on any device, even "meta"): flops, bytes, intensity
        (FLOP/byte), bound ("memory" or "compute"), sol_seconds (the speed-of-light time) with
        the profile's peak_flops, bandwidth and ridge. `profile` ("h100", "h200") defaults to
        the tensors' GPU, or the current one."""
        call = self.bind(tensors)
        if profile is None:
            gpu = next((t.device for t in tensors
                        if isinstance(t, torch.Tensor) and t.device.type == "cuda"), None)
            if gpu is None and torch.cuda.is_available():
                gpu = torch.device("cuda")
            profile = manifest.hardware_profile_for(None if gpu is None else device_name(gpu))
        return {"profile": profile, **self.spec.roofline(call, profile)}

    def _run(self, *tensors):
        if torch.compiler.is_compiling():
            return self._torch_op(*tensors, *self._param_tuple, self.key)
        return self._eager(tensors)

    def _device_of(self, tensors) -> torch.device:
        device = first = None
        reference = _kernels.reference_backend()
        for name, t in zip(self.inputs, tensors):
            if t is None:
                continue
            if reference and t.device.type != "cpu":
                raise ValueError(f"{type(self).__name__}: {name} is on {t.device}; the reference "
                                 "backend takes CPU tensors")
            if not reference and t.device.type != "cuda":
                raise ValueError(f"{type(self).__name__}: {name} is on {t.device}; TileOPs kernels "
                                 "take CUDA tensors")
            if device is None:
                device, first = t.device, name
            elif t.device != device:
                raise ValueError(f"{type(self).__name__}: {name} is on {t.device} but {first} is "
                                 f"on {device}")
        return device

    def run_into(self, outputs, *tensors) -> None:
        """The op's call writing into `outputs` (one tensor per spec output) instead of fresh
        tensors: what a caller holding preallocated buffers (a compiled graph's) uses. The binder
        checks each has the bound shape and dtype, is writable element by element and overlaps no
        input; here, that it is on the inputs' device and contiguous unless the class accepts
        strided outputs (`strided_outputs`, the launcher taking their strides)."""
        self._eager(tensors, tuple(outputs))

    # Whether `_launch` takes each output's strides (else outputs are contiguous).
    strided_outputs = False

    def _check_outputs(self, outputs, device) -> None:
        name = type(self).__name__
        for label, out in zip(self.outputs, outputs):
            if out.device != device:
                raise ValueError(f"{name}: output {label} is on {out.device}; the inputs are on "
                                 f"{device}")
            if self.strided_outputs:
                if out.dim() and out.numel() > 1 and out.stride(-1) != 1:
                    raise ValueError(f"{name}: output {label}'s last dim must be contiguous")
            elif not out.is_contiguous():
                raise ValueError(f"{name}: output {label} must be contiguous")

    def _eager(self, tensors, given_outputs=None):
        call = self.bind(tensors, given_outputs)
        reference = _kernels.reference_backend()
        if self._launcher is None or self._launcher_is_reference != reference:
            self._launcher = _kernels.launcher(type(self).__name__, self.kernel)
            self._launcher_is_reference = reference
        device = self._device_of(tensors)
        if given_outputs is not None:
            self._check_outputs(given_outputs, device)
            outs = list(given_outputs)
        else:
            outs = [torch.empty(shape, dtype=TORCH_DTYPES[dt], device=device)
                    for dt, shape in call.outputs]
        if reference:
            self._launch(call, tensors, outs, -1, 0)
        elif device.index is not None and device.index != torch.cuda.current_device():
            with torch.cuda.device(device):
                self._launch_on_current_stream(call, tensors, outs, device)
        else:
            self._launch_on_current_stream(call, tensors, outs, device)
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _launch_on_current_stream(self, call, tensors, outs, device):
        stream = torch.cuda.current_stream(device).cuda_stream
        config = self._config_for(call, tensors, outs, stream, device)
        self._launch(call, tensors, outs, config, stream)

    def _launch(self, call, tensors, outs, config: int, stream: int) -> None:
        if outs and all(o.numel() == 0 for o in outs):
            return  # nothing to compute
        tensors = list(tensors)  # holds the copies below until the launch is enqueued
        for i in self._rows_inputs:
            t = tensors[i]
            if t is not None and t.dim() > 1:
                r = rows_of(t)  # uncollapsible leading dims, or broadcast rows: the one copy
                if r is None or (r[0] > 1 and r[1] < t.shape[-1]):
                    tensors[i] = t.contiguous()
        self._launcher([None if t is None else kernel_tensor(t) for t in tensors],
                       [kernel_tensor(o) for o in outs], list(self._param_tuple), config, stream)


def dims(op: Op, call) -> dict:
    """Every bound variable and param of a call, by name."""
    return op.spec.dims(call)
