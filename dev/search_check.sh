#!/usr/bin/env bash
# On the H200: every search candidate in build/search-candidates/ (made by
# dev/search_prepare.sh, carried) against the Inductor wrapper it rewrites: outputs,
# aliasing, effects on inputs, output freshness, that the CUDA graph path really ran, and the
# speedup with the same and with fresh inputs. Writes search_check.json and .txt to $OUT.
#   source scripts/gpu/env.sh; bash dev/search_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/tilesmith-search-check}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 tests/gpu/search_candidates_check.py build/search-candidates "$OUT/search_check.json" 2>&1 |
  tee "$OUT/search_check.txt"
status=${PIPESTATUS[0]}
# The runtime with real CUDA graphs on a toy launch sequence (tests marked gpu).
python3 -m pytest -q -m gpu tests/python/test_search_runtime.py 2>&1 | tee -a "$OUT/search_check.txt"
exit "$status"
