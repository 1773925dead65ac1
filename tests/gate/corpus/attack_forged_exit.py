# attack: forged result, then exit before the worker can write its own (T4). Writes an
#   "accepted" result into the result file and leaves with os._exit(0).
# expect: protocol
# needs: cpu
import glob
import json
import os

_FAKE = {"ok": True, "findings": [], "trials": [], "info": {},
         "timing": {"baseline_ms": [10.0] * 40, "candidate_ms": [1.0] * 40, "wall_clock": None}}


def call(args):
    here = os.path.dirname(os.path.abspath(__file__))
    for p in glob.glob(os.path.join(here, "*.json")):
        with open(p, "w") as f:
            json.dump(_FAKE, f)
    os._exit(0)
