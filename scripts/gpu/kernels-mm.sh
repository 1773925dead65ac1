#!/usr/bin/env bash
# GPU check for the GEMM and attention kernels, run on the GPU machine:
#   - gpu_mm_tests: every gemm layout/dtype/config and attention dtype/D/causal/GQA/config case
#     against the fp64 CPU references (awkward sizes, strides, unaligned fallbacks)
#   - gpu_mm_bench: the spec workloads, ours vs cuBLAS (gemm) and TFLOP/s + error vs the CUDA-core
#     fallback (attention), every config
#   - sdpa_baseline.py: torch SDPA's cuDNN / flash / efficient backends on the attention workloads
# Logs and JSON under $OUT. Needs the CUTLASS headers when it has to build: TS_CUTLASS_DIR, or the
# nvidia-cutlass wheel in python3.
set -uo pipefail
cd "$(dirname "$0")/../.."
exec tests/gpu/run_mm_on_gpu.sh "$@"
