#!/usr/bin/env bash
# On this (CPU) machine: writes the search agent's candidates for Inductor wrappers into
# build/search-candidates/ (carry that path to the GPU machine for dev/search_check.sh).
#   bash dev/search_prepare.sh [WRAPPER_DIR]   (default: tests/data/inductor_cuda)
#   SEARCH_REWRITE=build/cpp/tests/cpp/agent/search_rewrite bash dev/search_prepare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${1:-tests/data/inductor_cuda}
# SEARCH_REWRITE names an already built tool; else one is built in its own build directory.
TOOL=${SEARCH_REWRITE:-build/search-tool/tests/cpp/agent/search_rewrite}
if [ -z "${SEARCH_REWRITE:-}" ]; then
  cmake -S . -B build/search-tool -G Ninja -DTS_BUILD_TESTS=ON -DTS_BUILD_CUDA=OFF >/dev/null
  cmake --build build/search-tool --target search_rewrite -j "${JOBS:-2}" >/dev/null
fi
DST=build/search-candidates
rm -rf "$DST" && mkdir -p "$DST"
for f in "$SRC"/*.py; do
  name=$(basename "$f" .py)
  cp "$f" "$DST/$name.py"
  for combo in cuda_graph autotune cuda_graph,autotune; do
    "$TOOL" "$f" "$DST/$name.${combo/,/+}.py" "$combo" ||
      echo "refused: $name $combo"
  done
done
ls "$DST" | wc -l
du -sh "$DST"
