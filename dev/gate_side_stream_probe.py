"""The CUDA gate on the side-stream attack of its corpus, a few times, with what each check saw:
the verdict, the wall-clock comparison and the correctness findings. Diagnostic only.
    PYTHONPATH=tests/python python3 dev/gate_side_stream_probe.py [ENTRY] [REPEATS]"""

import json
import sys
import tempfile

from gate_corpus import base_args, base_source, entries
from tilesmith.gate import Gate, GateOptions

name = sys.argv[1] if len(sys.argv) > 1 else "attack_side_stream"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
entry = next(e for e in entries() if e.name == name)
with tempfile.TemporaryDirectory() as track:
    gate = Gate(base_source(), base_args(2048, 2048, 2048, device="cuda"), track,
                GateOptions(device="cuda", timeout_s=300))
    try:
        for i in range(repeats):
            r = gate.evaluate(entry.source, label=f"{name}_{i}")
            print(f"{name} #{i}: {r.verdict} {r.kind}: {r.reason}", flush=True)
            t = r.timing or {}
            print("  timing:", json.dumps({k: t[k] for k in t if "wall" in k or "event" in k
                                           or k in ("l2", "pairs")})[:600], flush=True)
            print("  details:", json.dumps(r.details)[:600], flush=True)
    finally:
        gate.close()
