"""The layer boundaries of TileOPs (docs/layer-boundaries.md), checked by `tileops validate`.

One table, RULES: each rule names the files it reads and what it refuses there, and reports
every violation as `file:line:col: rule: what was found`. The checks read source text (Python
through `ast`, C++ and CUDA line by line); nothing is imported or run.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Roots:
    package: Path  # the tileops package folder
    source: Path | None = None  # the source checkout (kernels/, bench/), when there is one


@dataclasses.dataclass
class Checked:
    problems: list[str]
    files: int


def default_roots() -> Roots:
    package = Path(__file__).resolve().parent
    source = package.parent.parent
    is_checkout = (source / "kernels").is_dir() and (source / "specs").is_dir()
    return Roots(package, source if is_checkout else None)


# The op layer: what a call runs between the user and the kernel.
OP_LAYER = ("op.py", "ops.py", "_kernels.py")
# The runtime path: every module an op call imports.
RUNTIME = OP_LAYER + ("tune.py", "timing.py", "manifest.py", "__init__.py")

# torch calls the op layer may make: allocation, devices and streams, the custom-op library, the
# tuner's check that two configs agree. Anything else computes values, which only kernels do.
_TORCH_ALLOWED = {"empty", "empty_like", "empty_strided", "zeros", "device", "cuda", "library",
                  "compiler", "ops", "Generator", "allclose", "is_tensor"}
_MATH_METHODS = {
    "abs", "add", "add_", "addmm", "amax", "amin", "baddbmm", "bmm", "clamp", "cumsum", "div",
    "div_", "einsum", "exp", "lerp", "log", "log_softmax", "matmul", "mean", "mm", "mul", "mul_",
    "neg", "norm", "pow", "prod", "relu", "rsqrt", "sigmoid", "silu", "softmax", "sqrt", "std",
    "sub", "sub_", "sum", "tanh", "var", "where"}
_TEST_MODULES = re.compile(r"^(tests?|conftest|test_\w*|tilesmith_testing|gate_corpus)(\.|$)")
_TORCH_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](torch/|ATen/|c10/|Python\.h|pybind11/)')


def _imports(tree: ast.AST):
    """(node, dotted module name) of every import."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node, a.name
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            yield node, base
            for a in node.names:
                yield node, f"{base}.{a.name}" if base and not base.endswith(".") else base + a.name


def _torch_root(node: ast.AST) -> list[str] | None:
    """['cuda', 'synchronize'] for torch.cuda.synchronize; None when not under torch."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "torch":
        return list(reversed(parts))
    return None


def op_arithmetic(tree: ast.AST):
    for node, name in _imports(tree):
        if name in ("torch.nn.functional", "torch.nn.functional.*") or name.startswith(
                "torch.nn.functional."):
            yield node, f"imports {name}: the op layer computes nothing (kernels do)"
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            yield node, "a matrix product (@): the op layer computes nothing (kernels do)"
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        path = _torch_root(node.func)
        if path is not None:
            if path and path[0] not in _TORCH_ALLOWED:
                yield node, (f"calls torch.{'.'.join(path)}: the op layer only allocates, "
                             "launches and checks (kernels compute)")
        elif node.func.attr in _MATH_METHODS:
            yield node, (f"calls .{node.func.attr}(): tensor arithmetic belongs in a kernel, not "
                         "the op layer")


def runtime_references(tree: ast.AST):
    for node, name in _imports(tree):
        if re.search(r"(^|\.)(testing|references)$", name):
            yield node, (f"imports {name}: references and contract calls are never on the "
                         "runtime path")


def bench_tests(tree: ast.AST):
    for node, name in _imports(tree):
        if _TEST_MODULES.match(name.lstrip(".")):
            yield node, f"imports {name}: benchmarks never import the test suite"


def kernel_torch(text: str):
    for i, line in enumerate(text.splitlines(), 1):
        if _TORCH_INCLUDE.match(line):
            yield i, line.find("#") + 1, (f"includes {line.split('include', 1)[1].strip()}: "
                                          "kernels take pointers, sizes and strides, not torch")


def _op_layer_files(r: Roots):
    return [r.package / f for f in OP_LAYER]


def _runtime_files(r: Roots):
    return [r.package / f for f in RUNTIME]


def _bench_files(r: Roots):
    files = [r.package / "bench.py", r.package / "timing.py"]
    if r.source is not None:
        files += sorted((r.source / "bench").rglob("*.py"))
        files += [r.source / "python" / "tilesmith" / "bench.py"]
    return files


def _kernel_files(r: Roots):
    if r.source is None:
        return []
    return sorted(p for p in (r.source / "kernels").rglob("*")
                  if p.suffix in (".cu", ".cuh", ".cpp", ".hpp", ".h"))


# rule, the files it reads, its checker (Python: an ast tree; C++/CUDA: the text)
RULES = (
    ("op-layer-arithmetic", _op_layer_files, op_arithmetic),
    ("reference-on-runtime-path", _runtime_files, runtime_references),
    ("bench-imports-tests", _bench_files, bench_tests),
    ("kernel-depends-on-torch", _kernel_files, kernel_torch),
)


def check(roots: Roots) -> Checked:
    problems, seen = [], set()
    for rule, files_of, checker in RULES:
        for path in files_of(roots):
            if not path.is_file():
                continue
            seen.add(path)
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix == ".py":
                try:
                    tree = ast.parse(text, filename=str(path))
                except SyntaxError as e:
                    problems.append(f"{path}:{e.lineno}:{e.offset}: {rule}: cannot parse ({e.msg})")
                    continue
                places = set()  # one report per statement (`from a import b` names a and a.b)
                for node, what in checker(tree):
                    if (node.lineno, node.col_offset) not in places:
                        places.add((node.lineno, node.col_offset))
                        problems.append(f"{path}:{node.lineno}:{node.col_offset + 1}: {rule}: "
                                        f"{what}")
            else:
                for line, col, what in checker(text):
                    problems.append(f"{path}:{line}:{col}: {rule}: {what}")
    return Checked(problems, len(seen))
