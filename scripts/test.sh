#!/usr/bin/env bash
# Runs every test that needs no GPU: C++ unit tests (ctest), the CUDA kernels compiled for
# sm_90a, the Python package built and installed, pytest on the CPU, and the spec validator.
# GPU tests are marked `gpu` and run on the GPU machine (scripts/gpu-test.sh).
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

echo "== Python package"
"$PYTHON" -m pip install --no-build-isolation -q . 2>&1 | grep -v "Running pip as the 'root' user" || true
"$PYTHON" -c "import tileops, tilesmith" # fail loudly if the install did not take

echo "== Python tests (CPU)"
set +e
"$PYTHON" -m pytest -q -m "not gpu" tests/python
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi
[ "$rc" -eq 0 ] || exit "$rc"

echo "== Spec validator"
tileops validate
