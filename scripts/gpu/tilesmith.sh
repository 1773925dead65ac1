#!/usr/bin/env bash
# Tilesmith on torch.compile on the GPU machine: a small transformer block, inference
# and two training steps, with a scripted model conversation (mock OpenAI server) proposing a
# CUDA-graph replay candidate; the real gate decides; install, outputs vs eager, benchmarks(),
# per-call/step times vs plain torch.compile; every ineligible case with its reason.
#
# Here (the CPU machine), once, before the device run:
#   bash scripts/gpu/tilesmith.sh pack       # scripts/gpu/pack.sh + the mock server into .gpu/
# There (device run with carry [".gpu"]):
#   bash scripts/gpu/tilesmith.sh [inference] [training] [ineligible]     (default: all three)
# Results: $OUT/tilesmith_h200_<phase>.json, $OUT/tilesmith_h200.log, $OUT/tilesmith_tracks.tar.gz
# (the run tracks: attempts, gate reports, cache.json, artifacts).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = pack ]; then
  bash scripts/gpu/pack.sh
  # Its own build folder: build/cpp keeps the CUDA kernels the CI build configured.
  cmake -S . -B build/gpu-pack -G Ninja -DTS_BUILD_TESTS=ON -DTS_BUILD_CUDA=OFF >/dev/null
  cmake --build build/gpu-pack --target mock_openai_server -j "${JOBS:-2}"
  mkdir -p .gpu/bin
  cp build/gpu-pack/tests/cpp/agent/mock_openai_server .gpu/bin/
  ldd .gpu/bin/mock_openai_server | awk '/=>/ {print $3}' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|ld-linux)[.-]' |
    while read -r lib; do cp -L "$lib" .gpu/lib/; done
  ls -l .gpu/bin
  exit 0
fi

OUT=${OUT:-$(mktemp -d /tmp/tilesmith-gpu-XXXX)}
mkdir -p "$OUT"
source scripts/gpu/env.sh
export TS_MOCK_OPENAI_SERVER=$PWD/.gpu/bin/mock_openai_server
export PYTHONPATH=$PWD/tests/python${PYTHONPATH:+:$PYTHONPATH}
export TILESMITH_CACHE_DIR=${TILESMITH_CACHE_DIR:-/tmp/tilesmith-cache}
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/inductor-cache}
export OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt" || true
set +e
python3 scripts/gpu/tilesmith_h200.py "$@" 2>&1 | tee "$OUT/tilesmith_h200.log"
rc=${PIPESTATUS[0]}
set -e
tilesmith runs >>"$OUT/tilesmith_h200.log" 2>&1 || true
tar czf "$OUT/tilesmith_tracks.tar.gz" -C "$TILESMITH_CACHE_DIR" . 2>/dev/null || true
exit "$rc"
