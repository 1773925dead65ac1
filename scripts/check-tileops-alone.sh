#!/usr/bin/env bash
# The tileops wheel on its own: a virtual environment that sees torch and numpy from this Python
# but neither tilesmith-ai nor this checkout's sources runs `tileops validate`, `tileops show`
# and an op on its kernel's fp64 CPU reference (or its CUDA kernel where a GPU is present).
#   bash scripts/check-tileops-alone.sh build/wheels/tileops-*.whl
# Uninstalls tileops and tilesmith-ai from this Python first (the environment would see them).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
wheel=${1:?usage: check-tileops-alone.sh TILEOPS_WHEEL}
pip_quiet() { "$@" 2>&1 | grep -v "Running pip as the 'root' user" || true; }

pip_quiet "$PYTHON" -m pip uninstall -y -q tilesmith tilesmith-ai tileops
venv=build/venv-tileops-alone
rm -rf "$venv"
"$PYTHON" -m venv --system-site-packages "$venv"
pip_quiet "$venv/bin/python" -m pip install --no-deps -q "$wheel"
cd "$venv"  # away from the checkout: nothing may come from python/
bin/tileops validate
bin/tileops show RMSNormFwdOp | head -5
bin/python - <<'PY'
import importlib.util

import torch
import torch.nn.functional as F

import tileops
from tileops.ops import RMSNormFwdOp

assert importlib.util.find_spec("tilesmith") is None, "tilesmith is visible: not tileops alone"
x = torch.randn(4, 256, dtype=torch.bfloat16)
w = torch.randn(256, dtype=torch.bfloat16)
with tileops.use_reference_backend():
    y = RMSNormFwdOp(eps=1e-6)(x, w)
err = (y.float() - F.rms_norm(x.float(), (256,), w.float(), 1e-6)).abs().max().item()
assert err < 0.05, err
print(f"RMSNormFwdOp on its fp64 CPU reference: max |y - torch| = {err:.3g}; tilesmith absent")
PY
