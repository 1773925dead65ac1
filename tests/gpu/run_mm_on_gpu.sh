#!/usr/bin/env bash
# GEMM + attention on the GPU: builds the standalone project (unless build/gpu already holds the
# programs, e.g. carried from a build machine), runs the correctness sweep, the benchmark
# against cuBLAS, and (when python3 has torch) SDPA's backends on the attention workloads.
# Results under ${OUT:-build/gpu-out}: mm_tests.log, mm_bench.log, mm_bench.json, sdpa.log.
#   TS_CUTLASS_DIR=/path/to/cutlass/include tests/gpu/run_mm_on_gpu.sh [bench args]
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/gpu-out}"
build="${TS_GPU_BUILD:-build/gpu}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
build_programs() {
  cmake -S tests/gpu -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target gpu_mm_tests gpu_mm_bench >> "$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 3; }
}
# Carried binaries that cannot start here (other system libraries) are rebuilt.
if ! [ -x "$build/gpu_mm_tests" ] || ! ldd "$build/gpu_mm_bench" > /dev/null 2>&1 ||
   ldd "$build/gpu_mm_bench" | grep -q 'not found'; then
  build_programs
fi
"$build/gpu_mm_tests" ${TS_MM_TESTS_ARGS:-} > "$out/mm_tests.log" 2>&1
tests_rc=$?
grep -v '^PASS' "$out/mm_tests.log" | tail -40
"$build/gpu_mm_bench" --json "$out/mm_bench.json" "$@" > "$out/mm_bench.log" 2>&1
bench_rc=$?
if python3 -c 'import torch' 2> /dev/null; then
  python3 tests/gpu/sdpa_baseline.py > "$out/sdpa.log" 2>&1
fi
echo "gpu_mm_tests exit=$tests_rc gpu_mm_bench exit=$bench_rc"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
