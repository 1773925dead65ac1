#!/usr/bin/env bash
# One device command for several GPU tiers, each under its own time limit so one slow phase
# cannot take the others' results with it. Logs per phase under $OUT/logs, packed into
# $OUT/logs.tgz (the device returns at most 8 files), Inductor's caches as $OUT/inductor-cache.tgz.NN
# (copy the parts to .gpu/ here so the next run starts warm).
#   bash scripts/gpu/all.sh PHASE:SECONDS ...    phases: tileops tileops_bench tileops_tuned
#                                                decode_probe suite_probe search_runtime gate
#                                                tilesmith bench_quick sandbox large
#                                                attention_probe
# Env: GATE_PARTS (gate.sh), TILESMITH_PHASES (tilesmith.sh; default "inference ineligible"),
#      BENCH_SELECTION (bench.sh; default quick), TILEOPS_BENCH_ARGS (default --no-compile),
#      TILEOPS_TUNED_ARGS (tileops_tuned; default TILEOPS_BENCH_ARGS),
#      TILEOPS_TEST_FILTER (pytest -k for the tileops phase), PROBE_PROBLEMS (suite_probe: names),
#      LARGE_COLUMNS (large; default every column).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/ts-gpu-out}
logs=$OUT/logs
mkdir -p "$logs"
source scripts/gpu/env.sh
export TILESMITH_CACHE_DIR=/tmp/ts-cache TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-cache
# Inductor's FX-graph and AOTAutograd caches from earlier device runs (the previous run's
# $OUT/inductor-cache.tgz.NN, kept here as .gpu/inductor-cache.tgz.NN): compiled wrapper code only, so
# what any column runs and how it is timed is unchanged; first calls get shorter, max-autotune's
# most (a hit skips its GEMM autotuning). Tilesmith's own cache is not carried.
# The archive comes back in parts of at most 15 MB (the device returns files of 16 MiB at most).
if compgen -G ".gpu/inductor-cache.tgz.*" > /dev/null; then
  mkdir -p "$TORCHINDUCTOR_CACHE_DIR" && cat .gpu/inductor-cache.tgz.* | tar xz -C "$TORCHINDUCTOR_CACHE_DIR"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$logs/gpu.txt"
run_phase() {
  local name=$1 limit=$2 t0=$SECONDS
  local dir=$logs/$name
  mkdir -p "$dir"
  case $name in
    tileops) timeout "$limit" python3 -m pytest -q -m gpu -p no:cacheprovider -x tests/python/test_contracts.py -rfE ${TILEOPS_TEST_FILTER:+-k "$TILEOPS_TEST_FILTER"} > "$dir/pytest.log" 2>&1 ;;
    tileops_bench)  # with --tune in TILEOPS_BENCH_ARGS, every config's timing comes back in tune/
      timeout "$limit" python3 -m tileops.cli bench ${TILEOPS_BENCH_ARGS:---no-compile} --json "$dir/bench.json" --plot "$dir/roofline.png" > "$dir/bench.log" 2>&1
      local bench_rc=$?
      cp -r "$TILESMITH_CACHE_DIR/tileops/tune" "$dir/" 2>/dev/null
      (exit $bench_rc) ;;
    tileops_tuned)  # every config timed per row (the choices and timings kept in tune/)
      timeout "$limit" python3 -m tileops.cli bench --tune --no-compile ${TILEOPS_TUNED_ARGS:-${TILEOPS_BENCH_ARGS:-}} --json "$dir/bench.json" > "$dir/bench.log" 2>&1
      cp -r "$TILESMITH_CACHE_DIR/tileops/tune" "$dir/" 2>/dev/null ;;
    decode_probe)  # tileops against torch.compile on the decode rows: events and the CUPTI timeline, then ncu
      timeout "$((limit / 2))" python3 dev/decode_probe.py --settle --graph --plain-flush --trace > "$dir/events.txt" 2>&1
      timeout "$((limit / 3))" ncu --clock-control none --csv --metrics \
        gpu__time_duration.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
        python3 dev/decode_probe.py --runs 2 > "$dir/ncu.csv" 2> "$dir/ncu.log" ;;
    search_runtime)  # the search agent's CUDA graph runtime and direct launches on real graphs (tests marked gpu)
      timeout "$limit" python3 -m pytest -q -m gpu -p no:cacheprovider tests/python/test_search_runtime.py tests/python/test_direct_launch.py -rfE > "$dir/pytest.log" 2>&1 ;;
    suite_probe) timeout "$limit" python3 dev/suite_probe.py "$dir" ${PROBE_PROBLEMS:-} > "$dir/probe.log" 2>&1 ;;
    large)  # bench/large (an input of a third of the card): every column measured, or why not
      timeout "$limit" python3 python/tilesmith/bench.py bench/large ${LARGE_COLUMNS:+--columns "$LARGE_COLUMNS"} \
        --timeout "$((limit - 10))" --out "$dir/large.json" --log "$dir/large.log" > "$dir/run.log" 2>&1 ;;
    attention_probe) timeout "$limit" python3 dev/attention_probe.py > "$dir/probe.log" 2>&1 ;;
    sandbox)  # the workers' sandbox here: bwrap, namespaces, a CUDA run inside, the sandbox tests
      timeout "$((limit / 2))" python3 scripts/gpu/sandbox_probe.py > "$dir/probe.log" 2>&1
      local probe_rc=$?
      timeout "$((limit / 2))" python3 -m pytest -q -p no:cacheprovider tests/python/test_gate_sandbox.py -rfE > "$dir/pytest.log" 2>&1
      (exit $((probe_rc | $?))) ;;
    gate) OUT=$dir timeout "$limit" bash scripts/gpu/gate.sh > "$dir/gate.log" 2>&1 ;;
    tilesmith) OUT=$dir timeout "$limit" bash scripts/gpu/tilesmith.sh ${TILESMITH_PHASES:-inference ineligible} > "$dir/run.log" 2>&1 ;;
    bench_quick)  # the Tilesmith runs' tracks (attempts, gate reports) come back as tracks.tgz
      OUT=$dir timeout "$limit" bash scripts/gpu/bench.sh ${BENCH_SELECTION:-quick} $((limit - 15)) > "$dir/run.log" 2>&1
      local bench_rc=$?
      tar czf "$dir/tracks.tgz" -C "$TILESMITH_CACHE_DIR" runs 2>/dev/null
      (exit $bench_rc) ;;
    *) echo "unknown phase $name" > "$dir/run.log"; false ;;
  esac
  local rc=$?
  echo "$name rc=$rc $((SECONDS - t0))s" | tee -a "$logs/summary.txt"
  tail -15 "$dir"/*.log 2>/dev/null | cut -c1-220
}
for spec in "$@"; do run_phase "${spec%%:*}" "${spec##*:}"; done
tar czf "$OUT/logs.tgz" -C "$OUT" logs
cp "$logs/summary.txt" "$OUT/summary.txt"
rm -rf "$logs"  # inside logs.tgz now; the device returns at most 8 files
dirs=$(cd "$TORCHINDUCTOR_CACHE_DIR" 2>/dev/null && ls -d fxgraph aotautograd 2>/dev/null)
if [ -n "$dirs" ]; then
  # At most 3 parts (45 MB): the carried tree travels under 64 MiB with .gpu beside it.
  tar czf /tmp/inductor-cache.tgz -C "$TORCHINDUCTOR_CACHE_DIR" $dirs
  if [ "$(stat -c %s /tmp/inductor-cache.tgz)" -le 45000000 ]; then
    split -b 15000000 -d -a 2 /tmp/inductor-cache.tgz "$OUT/inductor-cache.tgz."
  else
    echo "inductor cache $(stat -c %s /tmp/inductor-cache.tgz) bytes: too large to bring back" >> "$OUT/summary.txt"
  fi
else
  echo "no fxgraph or aotautograd cache under $TORCHINDUCTOR_CACHE_DIR" >> "$OUT/summary.txt"
fi
