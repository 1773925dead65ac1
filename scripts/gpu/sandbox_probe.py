"""Whether the gate's worker sandbox runs on this (GPU) machine, and the GPU inside it.

    python3 scripts/gpu/sandbox_probe.py

Prints the bwrap in use, the sandbox's availability for the shell tool's limits and for a CUDA
worker, then runs a CUDA matmul in a sandboxed interpreter exactly as the gate starts its workers
(environment, readable paths, device nodes, private caches) and shows what that process sees:
its user, its process list, its network devices, whether $HOME and the run cache are visible.
Exit status 0 only when the sandboxed CUDA run succeeded.
"""

import os
import sys
import tempfile

from tilesmith import _core
from tilesmith import _sandbox
from tilesmith.gate import host

INSIDE = r"""
import os, socket, torch
a = torch.randn(512, 512, device="cuda")
print("cuda:", torch.cuda.get_device_name(0), "matmul ok:", bool(torch.isfinite(a @ a).all()))
print("pids visible:", sorted(int(p) for p in os.listdir("/proc") if p.isdigit())[:8])
print("net devices:", sorted(os.listdir("/sys/class/net")))
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("network: REACHABLE")
except OSError as e:
    print("network: unreachable", type(e).__name__)
print("env keys:", sorted(os.environ))
"""


def main() -> int:
    print("bwrap:", os.environ.get("TILESMITH_BWRAP") or "(from PATH)")
    shell = _core.Sandbox.untrusted()
    shell.processes = 64
    print("shell sandbox:", _sandbox.sandbox_unavailable() or "available",
          "| processes:", _sandbox.processes_unbounded(shell) or "bounded")
    with tempfile.TemporaryDirectory(prefix="tilesmith-probe-") as d:
        box = _sandbox.worker_sandbox(d, "cuda")
        why = _sandbox.sandbox_unavailable()
        print("worker sandbox:", why or "available", "| processes:",
              _sandbox.processes_unbounded(box) or "bounded", "| devices:", list(box.devices))
        if why:
            return 1
        env = host._worker_env()
        for var, sub in (("HOME", "home"), ("TRITON_CACHE_DIR", "triton"),
                         ("TORCHINDUCTOR_CACHE_DIR", "inductor")):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
            env[var] = os.path.join(d, sub)
        r = _core.proc_run([sys.executable, "-P", "-c", INSIDE], env=env, cwd=d,
                             timeout_s=300, sandbox=box)
        print(r.stdout.decode(errors="replace"))
        print(r.stderr.decode(errors="replace")[-3000:])
        print("exit", r.exit_code, "signal", r.term_signal, "wall_s", round(r.wall_s, 2))
        return 0 if r.succeeded else 1


if __name__ == "__main__":
    sys.exit(main())
