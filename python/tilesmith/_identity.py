"""What a graph is: the canonical wrapper text, the FX header of each attempt, the cache key.

The cache key is the 64-hex SHA-256 of the generated graph and its optimization environment:

    sha256(json({"graph": {fx_graph_cache_key | sha256(normalized wrapper),
                           sha256(post-grad FX text without file paths)},
                 "kind", "inputs": concrete layouts (dtype, size, stride, 16-byte alignment),
                 "env": torch/triton/CUDA versions, device, numeric flags,
                 "tilesmith": version, agent model, agency, loops, gate policy}))

Nothing in it depends on where Inductor's cache lives, so two machines (or two cache dirs) with
the same software and device agree on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re

import torch

_KERNEL_PATH_LINE = re.compile(r"^\s*# kernel path: .*$")
_FILE_LINE = re.compile(r"^(\s*)# File: .*$")
CACHE_DIR_PLACEHOLDER = "<inductor-cache>"


def inductor_cache_dir() -> str:
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    return os.path.realpath(cache_dir())


def normalize_wrapper(source: str) -> str:
    """Inductor's wrapper without absolute cache paths: `# kernel path:` comments are dropped and
    the cache dir in any other comment becomes a placeholder. Code lines are never changed (a code
    line that names the cache dir makes the graph ineligible: see eligibility)."""
    cache = inductor_cache_dir()
    out = []
    for line in source.splitlines():
        if _KERNEL_PATH_LINE.match(line):
            continue
        if line.lstrip().startswith("#") and cache in line:
            line = line.replace(cache, CACHE_DIR_PLACEHOLDER)
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def code_lines_naming_cache_dir(source: str) -> list[str]:
    cache = inductor_cache_dir()
    return [
        line.strip()
        for line in source.splitlines()
        if cache in line and not line.lstrip().startswith("#")
    ]


def _strip_file_lines(text: str) -> str:
    return "\n".join(l for l in text.splitlines() if not _FILE_LINE.match(l))


HEADER_START = "# ---- Tilesmith: the captured FX program (post-grad, with strides and devices) ----"
HEADER_END = "# ---- Inductor's generated wrapper follows ----"


def fx_header(fx_text: str, kind: str, graph_label: str) -> str:
    """The comment block every attempt starts with."""
    lines = [HEADER_START, f"# graph: {graph_label} ({kind})"]
    for line in (fx_text or "(the FX program was not available)").rstrip().splitlines():
        lines.append(("# " + line).rstrip())
    lines.append(HEADER_END)
    return "\n".join(lines) + "\n"


def with_header(header: str, text: str) -> str:
    """`text` with the FX header in front, unless it already starts with it."""
    if text.startswith(HEADER_START):
        return text
    return header + text


def _layout(arg) -> object:
    if isinstance(arg, torch.Tensor):
        align = (arg.storage_offset() * arg.element_size()) % 16
        return [str(arg.dtype), list(arg.shape), list(arg.stride()), align, arg.device.type]
    if isinstance(arg, (bool, int, float, str)) or arg is None:
        return [type(arg).__name__, arg]
    return [type(arg).__name__]


def _device_facts(device: str) -> dict:
    if device == "cuda" and torch.cuda.is_available():
        index = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(index)
        facts = {
            "name": props.name,
            "capability": list(torch.cuda.get_device_capability(index)),
            "sms": props.multi_processor_count,
        }
        try:
            facts["driver"] = torch._C._cuda_getDriverVersion()
        except Exception:  # older builds lack it; the rest still identifies the device
            pass
        return facts
    return {"name": platform.machine(), "processor": platform.processor(), "cpus": os.cpu_count()}


def _numeric_flags() -> dict:
    matmul = torch.backends.cuda.matmul
    flags = {
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "fp16_reduced": bool(matmul.allow_fp16_reduced_precision_reduction),
        "bf16_reduced": bool(matmul.allow_bf16_reduced_precision_reduction),
        "cudnn_tf32": bool(torch.backends.cudnn.allow_tf32),
    }
    for name in ("fp32_precision",):
        if hasattr(matmul, name):
            flags["matmul_" + name] = str(getattr(matmul, name))
    return flags


def environment(device: str) -> dict:
    try:
        import triton

        triton_version = triton.__version__
    except Exception:
        triton_version = None
    return {
        "torch": torch.__version__,
        "torch_git": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "triton": triton_version,
        "device_type": device,
        "device": _device_facts(device),
        "numeric": _numeric_flags(),
    }


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cache_key(*, fx_graph_cache_key, normalized_source: str, fx_text: str, kind: str, args,
              device: str, settings: dict) -> str:
    graph = {
        "fx": fx_graph_cache_key or ("src:" + sha256_text(normalized_source)),
        "post_grad": sha256_text(_strip_file_lines(fx_text or "")),
    }
    doc = {
        "graph": graph,
        "kind": kind,
        "inputs": [_layout(a) for a in args],
        "env": environment(device),
        "tilesmith": settings,
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
    return sha256_text(text)
