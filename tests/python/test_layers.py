"""The layer boundaries (docs/layer-boundaries.md): the tree keeps them, and `tileops validate`
fails with a located message on a planted violation of each kind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tileops
from tileops import layers

REPO = Path(__file__).resolve().parents[2]


def test_the_source_tree_keeps_every_boundary():
    checked = layers.check(layers.Roots(REPO / "python" / "tileops", REPO))
    assert checked.problems == []
    assert checked.files > 20  # the op layer, the runtime path, the benchmarks, every kernel file


# (rule, file under the fake checkout, text appended to it, what the message names)
PLANTED = [
    ("op-layer-arithmetic", "python/tileops/op.py",
     "\n\ndef _scale(x):\n    return x.mul(2.0)\n", "calls .mul()"),
    ("op-layer-arithmetic", "python/tileops/ops.py",
     "\n\ndef _norm(x):\n    return torch.rsqrt(x)\n", "calls torch.rsqrt"),
    ("op-layer-arithmetic", "python/tileops/_kernels.py",
     "\nimport torch.nn.functional as F\n", "imports torch.nn.functional"),
    ("reference-on-runtime-path", "python/tileops/op.py",
     "\nfrom . import testing\n", "imports .testing"),
    ("reference-on-runtime-path", "python/tileops/tune.py",
     "\nfrom tileops.references import rope_neox\n", "imports tileops.references"),
    ("bench-imports-tests", "bench/suite/problem.py",
     "\nfrom tests.python.test_contracts import _calls\n", "imports tests.python.test_contracts"),
    ("bench-imports-tests", "python/tileops/bench.py",
     "\nimport conftest\n", "imports conftest"),
    ("kernel-depends-on-torch", "kernels/norm/rms_norm.cu",
     "\n#include <torch/extension.h>\n", "includes <torch/extension.h>"),
    ("kernel-depends-on-torch", "kernels/gemm/gemm.hpp",
     '\n#include "ATen/cuda/CUDAContext.h"\n', 'includes "ATen/cuda/CUDAContext.h"'),
]


def _fake_checkout(tmp_path: Path) -> Path:
    """The installed package under python/tileops beside the repository's kernels, specs and
    benchmarks: what `tileops validate` sees in a checkout."""
    src = tmp_path / "src"
    shutil.copytree(Path(tileops.__file__).parent, src / "python" / "tileops",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("kernels", "specs", "bench"):
        shutil.copytree(REPO / part, src / part, ignore=shutil.ignore_patterns("*.json", "*.png"))
    (src / "bench" / "suite").mkdir(parents=True, exist_ok=True)
    return src


@pytest.mark.parametrize("rule,path,planted,names", PLANTED,
                         ids=[f"{r}-{Path(p).name}" for r, p, _, _ in PLANTED])
def test_validate_fails_on_a_planted_violation_with_its_location(tmp_path, rule, path, planted,
                                                                 names):
    src = _fake_checkout(tmp_path)
    target = src / path
    before = target.read_text() if target.exists() else ""
    target.write_text(before + planted)
    line = before.count("\n") + planted.rstrip("\n").count("\n") + 1  # the planted last line
    env = {**os.environ, "PYTHONPATH": str(src / "python")}
    r = subprocess.run([sys.executable, "-m", "tileops.cli", "validate"], env=env,
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    located = [ln for ln in r.stderr.splitlines() if f": {rule}: " in ln]
    assert len(located) == 1, r.stderr
    assert located[0].startswith(f"{target}:{line}:"), located[0]
    assert names in located[0]


def test_allocation_copies_and_the_tuners_check_are_not_arithmetic():
    import ast

    ok = ("torch.empty(3)\nt.contiguous()\nt.clone()\ntorch.allclose(a, b)\n"
          "torch.cuda.current_stream()\nmin(tried, key=tried.get)\n")
    assert list(layers.op_arithmetic(ast.parse(ok))) == []
    bad = "a @ b\nt.sum(-1)\ntorch.matmul(a, b)\n"
    assert [n.lineno for n, _ in layers.op_arithmetic(ast.parse(bad))] == [1, 2, 3]
