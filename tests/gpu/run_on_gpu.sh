#!/usr/bin/env bash
# Builds the kernels and GPU programs standalone (CUDA toolkit only), runs the correctness sweep
# and the benchmark. Results under ${OUT:-build/gpu-out}: tests.log, bench.log, bench.json.
#   tests/gpu/run_on_gpu.sh            (from the repository root)
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/gpu-out}"
mkdir -p "$out"
cmake -S tests/gpu -B build/gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > "$out/build.log" 2>&1 &&
  cmake --build build/gpu -j "$(nproc)" >> "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 3; }
build/gpu/gpu_kernel_tests 2>&1 | tee "$out/tests.log" | grep -v '^PASS'
tests_rc=${PIPESTATUS[0]}
build/gpu/gpu_kernel_bench --json "$out/bench.json" "$@" 2>&1 | tee "$out/bench.log" | grep -v 'cfg= [0-9] ' 
bench_rc=${PIPESTATUS[0]}
echo "gpu_kernel_tests exit=$tests_rc gpu_kernel_bench exit=$bench_rc"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ]
