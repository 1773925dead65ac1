"""Runs one Tilesmith scenario in a fresh process (test-only) and prints a JSON result line.

    python -m tilesmith_testing.driver infer|train

The environment chooses the cache dirs, the mock server (OPENAI_BASE_URL) and TILESMITH_ALLOW_CPU.
"""

import copy
import json
import sys

import torch

from tilesmith_testing import fake_gate

import os  # noqa: E402

if os.environ.get("TILESMITH_REAL_GATE") != "1":  # the test double stands in for the real gate
    sys.modules["tilesmith.gate"] = fake_gate

import tilesmith  # noqa: E402
from tilesmith import _api  # noqa: E402

from tilesmith_testing import RESULT_MARK  # noqa: E402
from tilesmith_testing.models import Small  # noqa: E402


class Broken(torch.nn.Module):
    """Two Dynamo graphs (a graph break), each with a forward and a backward."""

    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 8)
        self.l2 = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = torch.relu(self.l1(x))
        torch._dynamo.graph_break()
        return (torch.tanh(self.l2(h)) * h).sum()


def _state(m):
    s = _api._session_of(m)
    out = {"diagnostics": [dict(vars(d)) if not hasattr(d, "__dataclass_fields__")
                           else {k: getattr(d, k) for k in d.__dataclass_fields__}
                           for d in tilesmith.diagnostics(m)],
           "benchmarks": [b.as_dict() for b in tilesmith.benchmarks(m)],
           "run_info": tilesmith.run_info(m),
           "candidate_calls": [getattr(g.installed_module, "_ts_calls", [None])[0]
                               if g.installed_module is not None else None for g in s.graphs]}
    return out


def infer():
    torch.manual_seed(0)
    model = Small().eval()
    x = torch.randn(4, 8)
    m = tilesmith.compile(model, example_inputs=(x,), max_model_calls=6)
    with torch.no_grad():
        eager = model(x)
        first = m(x)
        second = m(x)
    res = _state(m)
    res["first_err"] = (first - eager).abs().max().item()
    res["second_err"] = (second - eager).abs().max().item()
    res["user_x_ptr"] = x.data_ptr()
    return res


def infer_in_place():
    """infer, then enough calls for the in-place check (TILESMITH_INSITU_PAIRS set by the test)."""
    from tilesmith import _insitu

    torch.manual_seed(0)
    model = Small().eval()
    x = torch.randn(4, 8)
    m = tilesmith.compile(model, example_inputs=(x,), max_model_calls=6)
    calls = 2 * (_insitu.pairs_from_env("cpu") + _insitu.WARMUP_PAIRS) + 2
    with torch.no_grad():
        eager = model(x)
        errs = [(m(x) - eager).abs().max().item()]
        status_after_install = tilesmith.diagnostics(m)[0].status
        errs += [(m(x) - eager).abs().max().item() for _ in range(calls)]
    res = _state(m)
    res.update(errs=errs, status_after_install=status_after_install)
    return res


def train():
    torch.manual_seed(0)
    model = Broken()
    ref = copy.deepcopy(model)
    x = torch.randn(4, 8)
    m = tilesmith.compile(model, example_inputs=(x,), max_model_calls=8)
    res = {"loss_err": [], "grad_err": []}
    for _ in range(2):
        for p in list(model.parameters()) + list(ref.parameters()):
            p.grad = None
        loss = m(x)
        loss.backward()
        ref_loss = ref(x)
        ref_loss.backward()
        res["loss_err"].append(abs(loss.item() - ref_loss.item()))
        res["grad_err"].append(max((p.grad - q.grad).abs().max().item()
                                   for p, q in zip(model.parameters(), ref.parameters())))
    res.update(_state(m))
    return res


if __name__ == "__main__":
    result = {"infer": infer, "infer_in_place": infer_in_place, "train": train}[sys.argv[1]]()
    print(RESULT_MARK + json.dumps(result, default=str), flush=True)
