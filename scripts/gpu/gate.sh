#!/usr/bin/env bash
# GPU tier of the gate, run on the GPU machine (from the repository root):
#   1. tests/python/test_gate_corpus.py -m gpu: the whole adversarial corpus on CUDA (CPU and
#      CUDA attacks alike: side stream, persisting L2, freed-reference reads included), each
#      rejected with the reason its header names; the honest rewrites accepted and confirmed;
#      A versus A rejected.
#   2. scripts/gpu/gate_bench.py: A versus A >= 50 times on a >= 100 us graph (never accepted;
#      CI half-width target <= 1%), wall time of one evaluation of a ~1 ms graph including the
#      confirmation (target <= 10 s), and real Inductor wrappers (tests/data/inductor_cuda/) gated
#      A versus A and against generic attacks built from them.
# Logs and JSON under $OUT: env.txt, gate_corpus.log, gate_corpus.xml, gate_bench.log,
# gate_bench.json. GATE_PARTS=corpus,bench (default both); GATE_REPS (default 50);
# GATE_BENCH_PARTS (gate_bench.py --parts; default avsa,eval,inductor).
#   Device run:  bash scripts/gpu/pack.sh (here), then carry .gpu and run bash scripts/gpu/gate.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/gate-gpu}"
mkdir -p "$out"
if [ -d .gpu ] && [ -f scripts/gpu/env.sh ]; then
  # shellcheck disable=SC1091
  source scripts/gpu/env.sh
fi
export PYTHONUNBUFFERED=1
parts="${GATE_PARTS:-corpus,bench}"
python3 - > "$out/env.txt" 2>&1 <<'PY'
import torch, tilesmith.gate
from tilesmith import _core
print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "-")
print("tilesmith._core", _core.__file__, "tilesmith.gate", tilesmith.gate.__file__)
PY
cat "$out/env.txt"
corpus_rc=0
bench_rc=0
if [[ ",$parts," == *",corpus,"* ]]; then
  python3 -m pytest -q -m gpu tests/python/test_gate_corpus.py -rA \
    --junitxml="$out/gate_corpus.xml" 2>&1 | tee "$out/gate_corpus.log" | grep -E "PASSED|FAILED|ERROR|passed|failed"
  corpus_rc=${PIPESTATUS[0]}
fi
if [[ ",$parts," == *",bench,"* ]]; then
  python3 scripts/gpu/gate_bench.py --out "$out" --reps "${GATE_REPS:-50}" \
    --parts "${GATE_BENCH_PARTS:-avsa,eval,inductor}" 2>&1 | tee "$out/gate_bench.log"
  bench_rc=${PIPESTATUS[0]}
fi
echo "gate corpus exit=$corpus_rc gate bench exit=$bench_rc"
[ "$corpus_rc" = 0 ] && [ "$bench_rc" = 0 ]
