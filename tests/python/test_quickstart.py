"""The README's main job (examples/quickstart.py) runs on this machine and says what happened."""

import os
import pathlib
import subprocess
import sys

QUICKSTART = pathlib.Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_the_quickstart_runs_both_products_end_to_end(tmp_path):
    env = {**os.environ, "TILESMITH_CACHE_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, str(QUICKSTART)], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = r.stdout
    assert "outputs match the eager model" in out
    assert "graph 1 (inference): " in out  # its status, in words (installed or kept, and why)
    if "cuda" not in out.splitlines()[0]:  # on a CPU: nothing to rewrite, and why each kind
        assert ("kept Inductor: no candidate accepted: tilesmith-search found nothing in this "
                "graph that it can rewrite; not proposed: cuda_graph: ") in out
    assert "max |y - torch|" in out and "RMSNormFwdOp" in out and "SOL time" in out
