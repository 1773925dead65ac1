#!/usr/bin/env bash
# The workload suite on the GPU machine: `tilesmith bench` writes bench.json, bench.png (or
# .svg), bench.log and bench.txt (the table) into $OUT.
#
#   source scripts/gpu/env.sh                 # after scripts/gpu/pack.sh ran here, .gpu carried
#   bash scripts/gpu/bench.sh [SELECTION] [BUDGET_S]      (BENCH_ARGS="--rerun a,b" measures kept ones again)
#
# SELECTION: quick (default; 8 problems across the kinds), all, part:K/N (every N-th problem of
# the suite from the K-th: one device command each), or a comma-separated list of problem names.
# BUDGET_S (default 540) is the wall time for the whole command: no problem starts once it is
# nearly spent, and each problem's deadline is what is left, at most PROBLEM_TIMEOUT (300 s). A device command has 10 minutes,
# so run the suite in parts; carry the previous bench.json and name it in BENCH_PREVIOUS to
# merge (problems already measured are kept, not rerun).
#
# Per problem it checks: Tilesmith (agent_model="tilesmith-search") against Inductor default,
# max-autotune-no-cudagraphs and reduce-overhead in the same process, CUDA-event timing with a
# sync before each start, outputs (and gradients for training problems) against eager after
# Tilesmith installed its candidate; then the geomean.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tilesmith-bench-out}
mkdir -p "$OUT"
SELECTION=${1:-quick}
BUDGET=${2:-540}
PY=${PYTHON:-python3}

if ! "$PY" -c "import tilesmith" 2>/dev/null; then
  # No installed package: use the tree's Python sources (the tilesmith column then reports why
  # it could not run, per problem, and the other columns are still measured).
  export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/tilesmith-bench-inductor-cache}

args=()
case "$SELECTION" in
  quick) args+=(--quick) ;;
  all) ;;
  part:*) args+=(--part "${SELECTION#part:}") ;;
  *) args+=(--problems "$SELECTION") ;;
esac
if [ -n "${BENCH_PREVIOUS:-}" ] && [ -f "$BENCH_PREVIOUS" ]; then
  cp "$BENCH_PREVIOUS" "$OUT/bench.json"
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1 || true
"$PY" python/tilesmith/bench.py bench/suite "${args[@]}" --resume \
  --out "$OUT/bench.json" --plot "$OUT/bench.png" --log "$OUT/bench.log" \
  --time-budget "$BUDGET" --timeout "${PROBLEM_TIMEOUT:-300}" ${BENCH_ARGS:-} | tee "$OUT/bench.txt"
status=${PIPESTATUS[0]}
# The children's logs can be large; keep the tail so the file comes back.
if [ -f "$OUT/bench.log" ] && [ "$(stat -c %s "$OUT/bench.log")" -gt 15000000 ]; then
  tail -c 15000000 "$OUT/bench.log" > "$OUT/bench.log.tail" && mv "$OUT/bench.log.tail" "$OUT/bench.log"
fi
exit "$status"
