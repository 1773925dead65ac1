"""Both products on this machine, end to end, in about a minute.

    python examples/quickstart.py

Tilesmith: a small MLP through `tilesmith.compile` with the built-in search agent (no API key).
With a CUDA GPU, each Inductor graph gets candidate rewrites that the gate checks for equal
outputs and a confirmed speedup, and a winner is installed; `benchmarks()` prints Inductor's time
and Tilesmith's. On a CPU the search agent's rewrites (CUDA graphs, Triton launches and configs,
cuBLASLt epilogues, TileOPs kernels) have nothing to work on, and `diagnostics()` says so per graph.

TileOPs: RMSNorm from its spec, on the CUDA kernel or, without a GPU, on the kernel's fp64 CPU
reference; then the spec's signature and roofline (`tileops show`).
"""

import os
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

CUDA = torch.cuda.is_available()
if not CUDA:
    os.environ.setdefault("TILESMITH_ALLOW_CPU", "1")  # Tilesmith optimizes CUDA graphs by default

import tileops  # noqa: E402
import tilesmith  # noqa: E402
from tileops.ops import RMSNormFwdOp  # noqa: E402


def tilesmith_demo(device: str, dtype: torch.dtype) -> None:
    print(f"== Tilesmith: a 3-layer MLP on {device} ({dtype}), built-in search agent")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(approximate="tanh"),
                          nn.Linear(4096, 1024)).to(device, dtype).eval()
    x = torch.randn(256, 1024, device=device, dtype=dtype)
    fast = tilesmith.compile(model, example_inputs=(x,), agent_model="tilesmith-search",
                             max_optimization_s=300)
    with torch.no_grad():
        y = fast(x)  # first call: Inductor compiles, Tilesmith searches, the gate decides
        torch.testing.assert_close(y, model(x), rtol=2e-2, atol=2e-2)
    print("outputs match the eager model")
    for g in tilesmith.diagnostics(fast):
        print(f"graph {g.index} ({g.kind}): {g.status}")
        for t in g.tried:
            print(f"  judged {'+'.join(t['rewrites'])}: {t['reason'] or t['verdict']}")
    for b in tilesmith.benchmarks(fast):
        print(f"graph {b.graph}: Inductor {b.torch_inductor_ms:.4f} ms, Tilesmith "
              f"{b.tilesmith_ms:.4f} ms, {b.speedup:.2f}x ({', '.join(b.rewrites)})")


def tileops_demo(device: str) -> None:
    where = "its CUDA kernel" if CUDA else "its kernel's fp64 CPU reference"
    print(f"\n== TileOPs: RMSNorm on {where}")
    x = torch.randn(16, 4096, device=device, dtype=torch.bfloat16)
    w = torch.randn(4096, device=device, dtype=torch.bfloat16)
    norm = RMSNormFwdOp(eps=1e-6)
    if CUDA:
        y = norm(x, w)
    else:
        with tileops.use_reference_backend():
            y = norm(x, w)
    ref = F.rms_norm(x.float(), (4096,), w.float(), 1e-6)
    print(f"y {list(y.shape)} {y.dtype}, max |y - torch| = {(y.float() - ref).abs().max():.3g}")
    print()
    subprocess.run([sys.executable, "-m", "tileops.cli", "show", "RMSNormFwdOp"], check=True)


if __name__ == "__main__":
    device = "cuda" if CUDA else "cpu"
    tilesmith_demo(device, torch.bfloat16 if CUDA else torch.float32)
    tileops_demo(device)
