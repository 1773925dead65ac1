#!/usr/bin/env bash
# Runs every test that needs no GPU: C++ unit tests (ctest), the CUDA kernels compiled for
# sm_90a, both Python distributions built (tileops also tried on its own) and installed, pytest
# on the CPU, and the spec validator.
# GPU tests are marked `gpu` and run on the GPU machine (scripts/gpu/all.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}

bash scripts/install-deps.sh

echo "== C++ build (core, tests, kernels for sm_90a)"
cmake -S . -B build/cpp -G Ninja -DTS_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/cpp -j "$JOBS"

echo "== C++ tests"
ctest --test-dir build/cpp --output-on-failure -j "$JOBS"

echo "== Python distributions: tileops and tilesmith-ai wheels"
bash scripts/install-project.sh --build-only
echo "== tileops alone: its wheel in a virtual environment without tilesmith-ai"
bash scripts/check-tileops-alone.sh build/wheels/tileops-*.whl
echo "== installing both"
bash scripts/install-project.sh --install-only

echo "== Python tests (CPU)"
set +e
"$PYTHON" -m pytest -q -m "not gpu" tests/python
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi
[ "$rc" -eq 0 ] || exit "$rc"

echo "== Spec validator"
tileops validate
