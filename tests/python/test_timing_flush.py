"""timing.flush_l2's kernel, run by Triton's interpreter on the CPU: it reads every element."""

import os
import subprocess
import sys

SCRIPT = """
import torch
from tileops import timing
buf = torch.arange(3 * timing.FLUSH_BLOCK + 5, dtype=torch.float32)
partial = timing.flush_l2(buf)
assert partial.shape == (4,), partial.shape
assert torch.equal(partial.double().sum(), buf.double().sum()), (partial, buf.sum())
print("ok")
"""


def test_the_evict_last_flush_reads_every_element_once():
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
