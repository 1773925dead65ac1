#!/usr/bin/env bash
# Builds both distributions from this checkout into build/wheels/ and installs them:
#   tileops        packaging/tileops       the op library (CUDA kernels where nvcc is found)
#   tilesmith-ai   packaging/tilesmith-ai  Tilesmith (depends on tileops)
# Builds are incremental (each distribution keeps its CMake folder under build/).
#   --build-only     build the wheels, install nothing
#   --install-only   install the wheels an earlier --build-only left in build/wheels/
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
mode=${1:-all}
pip_quiet() { "$PYTHON" -m pip "$@" 2>&1 | grep -v "Running pip as the 'root' user" || true; }

if [ "$mode" != --install-only ]; then
  rm -rf build/wheels
  pip_quiet wheel --no-build-isolation --no-deps -q -w build/wheels ./packaging/tileops ./packaging/tilesmith-ai
fi
for dist in tileops tilesmith_ai; do
  ls build/wheels/"$dist"-*.whl >/dev/null || { echo "the $dist wheel was not built" >&2; exit 1; }
done
[ "$mode" = --build-only ] && exit 0
# `tilesmith` is the single distribution these two replace: its files would shadow theirs.
pip_quiet uninstall -y -q tilesmith
pip_quiet install --no-deps --force-reinstall -q build/wheels/*.whl
"$PYTHON" -c "import tileops, tilesmith"  # fail loudly if the install did not take
