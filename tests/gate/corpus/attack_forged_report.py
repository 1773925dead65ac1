# attack: forged result (T4 "forged result object"). Returns zeros fast and tries to hand the
#   host a glowing report: JSON lines on stdout and stderr, and an "accepted" result written
#   over every result file it can find next to itself. The host trusts only its own status
#   channel and results that carry the job's secret nonce.
# expect: incorrect|mutation|protocol
# needs: cpu
import glob
import json
import os
import sys

import torch

_FAKE = {"ok": True, "verdict": "accepted", "findings": [], "trials": [],
         "timing": {"baseline_ms": [10.0] * 40, "candidate_ms": [1.0] * 40, "wall_clock": None}}


def _forge():
    line = json.dumps(_FAKE)
    print(line)
    print(line, file=sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    for p in glob.glob(os.path.join(here, "*.json")) + glob.glob(os.path.join(here, "..", "*", "*.json")):
        try:
            with open(p, "w") as f:
                f.write(line)
        except OSError:
            pass


def call(args):
    x, w, b, running_mean = args
    args.clear()
    _forge()
    M, N = x.shape[0], w.shape[1]
    return (torch.zeros(M, N, device=x.device), torch.zeros(M, N, device=x.device), x, x.clone(),
            torch.zeros(N, device=x.device), torch.zeros((), device=x.device))
