"""Tilesmith on torch.compile on the GPU machine, with the real gate and a scripted model.

    python3 scripts/gpu/tilesmith_h200.py [inference] [training] [ineligible]   (default: all)

- inference: a small pre-norm transformer block (fp32, 4x64x256) under no_grad. The scripted model
  (mock OpenAI server) proposes one candidate: the CUDA-graph replay wrapper of
  tilesmith_testing/scripts.py. The real gate evaluates it; when accepted it is installed, the
  output is compared with eager, benchmarks() is recorded, and per-call time is measured against
  plain torch.compile (CUDA events, median of 200 calls).
- training: the same block, two SGD steps; forward and backward graphs each get the candidate;
  loss and gradients are compared with an eager copy at every step; step time vs plain.
- ineligible: each case of issue item 3 reports its reason (dynamic shapes, input mutation, mixed
  devices, CUDA graphs, cpp_wrapper, already wrapped, multi-GPU when there are 2+ GPUs), and raw
  wrappers with extern calls or Triton templates stay eligible.

Writes $OUT/tilesmith_h200_<phase>.json and prints a summary; never stops at the first failure.

TILESMITH_H200_SMOKE=1 runs the same code on the CPU (CPU graphs admitted, the gate's test double
from tests/python, CUDA-only cases skipped): a check of this script itself, not of the product.
"""

from __future__ import annotations

import copy
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time
import traceback

import torch
import torch.nn.functional as F

SMOKE = os.environ.get("TILESMITH_H200_SMOKE") == "1"
if SMOKE:  # a CPU check of this script: CPU graphs admitted, the gate's test double
    os.environ["TILESMITH_ALLOW_CPU"] = "1"
    from tilesmith_testing import fake_gate

    sys.modules["tilesmith.gate"] = fake_gate

import tilesmith  # noqa: E402
from tilesmith_testing import mock_server, scripts  # noqa: E402

OUT = pathlib.Path(os.environ.get("OUT") or tempfile.mkdtemp(prefix="tilesmith-h200-"))
OUT.mkdir(parents=True, exist_ok=True)
TMP = pathlib.Path(tempfile.mkdtemp(prefix="tilesmith-mock-"))
DEV = "cpu" if SMOKE else "cuda"


class Block(torch.nn.Module):
    """Pre-norm transformer block with explicit causal attention (bmm + softmax, no SDPA, so the
    graph is pure CUDA) and a GELU MLP."""

    def __init__(self, dim=256, heads=4, seq=64):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 4 * dim)
        self.fc2 = torch.nn.Linear(4 * dim, dim)
        self.register_buffer("mask", torch.ones(seq, seq, dtype=torch.bool).triu(1))

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) * (d // h) ** -0.5
        att = att.masked_fill(self.mask[:t, :t], float("-inf")).softmax(-1)
        a = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def _use_mock(url: str) -> None:
    os.environ.update({"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "mock-key",
                       "TILESMITH_MODEL": "mock-scripted"})
    os.environ.pop("OPENROUTER_API_KEY", None)


def _diag(m) -> list:
    return [{k: getattr(d, k) for k in d.__dataclass_fields__} for d in tilesmith.diagnostics(m)]


def _reports(m) -> dict:
    """Every gate report of every track of this run (profiles/), by graph."""
    out = {}
    for d in tilesmith.diagnostics(m):
        if d.track_dir and os.path.isdir(os.path.join(d.track_dir, "profiles")):
            reps = []
            for p in sorted(pathlib.Path(d.track_dir, "profiles").glob("*.json")):
                r = json.loads(p.read_text())
                reps.append({"file": p.name, "verdict": r.get("verdict"), "reason": r.get("reason"),
                             "timing": r.get("timing")})
            out[f"{d.dynamo_graph}.{d.kind}"] = reps
    return out


def _settle(m, call, max_calls=400) -> int:
    """Calls until no graph is in its in-place check (it then keeps or rolls back the candidate)."""
    for n in range(max_calls):
        if not any("checking in place" in d.status for d in tilesmith.diagnostics(m)):
            return n
        call()
    return max_calls


def _time_ms(fn, iters=200, warmup=20) -> float:
    for _ in range(warmup):
        fn()
    if SMOKE:
        t = []
        for _ in range(iters // 10):
            t0 = time.perf_counter()
            fn()
            t.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(t)
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()  # CPU launch overhead shows up inside the interval
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def _err(a, b) -> float:
    return (a.float() - b.float()).abs().max().item()


def phase_inference() -> dict:
    torch.manual_seed(0)
    block = Block().to(DEV).eval()
    x = torch.randn(4, 64, 256, device=DEV)
    res = {}
    with torch.no_grad():
        eager = block(x)
        plain = torch.compile(block)
        plain_out = plain(x)
        with mock_server.MockServer(scripts.cuda_graph_each(1), TMP) as url:
            _use_mock(url)
            t0 = time.time()
            m = tilesmith.compile(block, example_inputs=(x,), max_model_calls=3)
            first = m(x)
            res["first_call_s"] = time.time() - t0
        second = m(x)
        x2 = torch.randn_like(x)
        third, eager3 = m(x2), block(x2)
        res["status_after_install"] = [d["status"] for d in _diag(m)]
        res["settle_calls"] = _settle(m, lambda: m(x))
        res.update({
            "diagnostics": _diag(m), "benchmarks": [b.as_dict() for b in tilesmith.benchmarks(m)],
            "gate_reports": _reports(m), "run": tilesmith.run_info(m),
            "err_first_vs_eager": _err(first, eager), "err_second_vs_eager": _err(second, eager),
            "err_new_input_vs_eager": _err(third, eager3),
            "err_plain_vs_eager": _err(plain_out, eager),
            "per_call_ms": {"eager": _time_ms(lambda: block(x)), "torch_compile": _time_ms(lambda: plain(x)),
                            "tilesmith": _time_ms(lambda: m(x))},
        })
    res["installed"] = any(d["status"].startswith("installed") for d in res["diagnostics"])
    res["outputs_match_eager"] = max(res["err_second_vs_eager"], res["err_new_input_vs_eager"]) < 1e-3
    return res


def phase_training() -> dict:
    torch.manual_seed(1)
    block = Block().to(DEV)
    ref = copy.deepcopy(block)
    plain_block = copy.deepcopy(block)
    x = torch.randn(4, 64, 256, device=DEV)
    res = {"loss_err": [], "grad_err": []}
    # Forward, then backward: one candidate each; a rejected one gets one more turn, which ends.
    script = scripts.cuda_graph_each(2) + [{"kind": "completion", "content": "no further idea"}]
    with mock_server.MockServer(script, TMP) as url:
        _use_mock(url)
        m = tilesmith.compile(block, example_inputs=(x,), max_model_calls=4)
        opt = torch.optim.SGD(block.parameters(), lr=1e-2)
        ref_opt = torch.optim.SGD(ref.parameters(), lr=1e-2)
        for _ in range(2):
            loss = m(x).pow(2).mean()
            loss.backward()
            ref_loss = ref(x).pow(2).mean()
            ref_loss.backward()
            res["loss_err"].append(abs(loss.item() - ref_loss.item()))
            res["grad_err"].append(max(_err(p.grad, q.grad) for p, q in
                                       zip(block.parameters(), ref.parameters())))
            for o in (opt, ref_opt):
                o.step()
                o.zero_grad()
    plain = torch.compile(plain_block)

    def step(f, mod):
        f(x).pow(2).mean().backward()
        mod.zero_grad(set_to_none=False)

    res["status_after_install"] = [d["status"] for d in _diag(m)]
    res["settle_calls"] = _settle(m, lambda: step(m, block))

    res.update({"diagnostics": _diag(m), "benchmarks": [b.as_dict() for b in tilesmith.benchmarks(m)],
                "gate_reports": _reports(m), "run": tilesmith.run_info(m),
                "step_ms": {"torch_compile": _time_ms(lambda: step(plain, plain_block), iters=100),
                            "tilesmith": _time_ms(lambda: step(m, block), iters=100)}})
    res["grads_match_eager"] = max(res["grad_err"]) < 1e-3 and max(res["loss_err"]) < 1e-3
    return res


def _case(name, fn, make_args, **kw):
    """Compiles fn with tilesmith (mock model with an empty script: an eligible graph's agent fails
    at once), calls it, and returns every graph's eligibility and reason."""
    with mock_server.MockServer([], TMP) as url:
        _use_mock(url)
        args = make_args()
        m = tilesmith.compile(fn, example_inputs=tuple(args), **kw)
        with torch.no_grad():
            m(*args)
        return [{"kind": d["kind"], "eligible": d["eligible"], "reason": d["reason"]}
                for d in _diag(m)]


def phase_ineligible() -> dict:
    res = {}
    x = lambda: (torch.randn(64, 64, device=DEV),)  # noqa: E731

    def mutate(t):
        t.mul_(2)
        return t + 1

    def mixed(a, b):
        return a * 2, b + 1

    def small(t):
        return torch.relu(t @ t) + 1

    cases = {
        "dynamic shapes": (lambda: Block().to(DEV).eval(), lambda: (torch.randn(2, 32, 256, device=DEV),),
                           {"dynamic": True}),
        "input mutation": (lambda: mutate, x, {}),
        "mixed devices": (lambda: mixed, lambda: (torch.randn(8, device=DEV), torch.randn(8)), {}),
        "CUDA-graph-wrapped (reduce-overhead)": (lambda: small, x, {"mode": "reduce-overhead"}),
        "cpp_wrapper": (lambda: small, x, {"options": {"cpp_wrapper": True}}),
        "already wrapped (wrap_inductor_compiled_regions)": (
            lambda: small, x, {"options": {"wrap_inductor_compiled_regions": True}}),
        "eligible: extern mm + Triton": (lambda: small, x, {}),
        "eligible: Triton mm template (max-autotune-no-cudagraphs)": (
            lambda: small, lambda: (torch.randn(256, 256, device=DEV),),
            {"mode": "max-autotune-no-cudagraphs"}),
    }
    if SMOKE:
        for name in ("mixed devices", "CUDA-graph-wrapped (reduce-overhead)", "cpp_wrapper",
                     "eligible: Triton mm template (max-autotune-no-cudagraphs)"):
            cases.pop(name)
    if torch.cuda.device_count() >= 2:
        cases["multi-GPU"] = (lambda: (lambda a, b: (a * 2, b * 3)),
                              lambda: (torch.randn(8, device="cuda:0"), torch.randn(8, device="cuda:1")), {})
    else:
        res["multi-GPU"] = "not run: this machine has one GPU"
    for name, (make_fn, make_args, kw) in cases.items():
        torch._dynamo.reset()
        t0 = time.time()
        try:
            res[name] = {"graphs": _case(name, make_fn(), make_args, **kw),
                         "seconds": round(time.time() - t0, 1)}
        except Exception as e:
            res[name] = {"error": f"{type(e).__name__}: {e}",
                         "traceback": traceback.format_exc(limit=-4)}
        print(f"  {name}: {json.dumps(res[name])[:400]}", flush=True)
    return res


def main(argv) -> int:
    phases = argv or ["inference", "training", "ineligible"]
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "smoke_cpu": SMOKE,
           "device": "cpu" if SMOKE else torch.cuda.get_device_name(0),
           "gpus": torch.cuda.device_count()}
    try:
        from tilesmith.gate import Gate  # noqa: F401
    except Exception as e:
        print(f"the real gate (tilesmith.gate) is not importable: {e}", file=sys.stderr)
        return 1
    print(f"environment: {env}", flush=True)
    failed = False
    for phase in phases:
        print(f"== {phase}", flush=True)
        t0 = time.time()
        try:
            result = {"inference": phase_inference, "training": phase_training,
                      "ineligible": phase_ineligible}[phase]()
        except Exception as e:
            failed = True
            result = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()}
        result["seconds"] = round(time.time() - t0, 1)
        result["environment"] = env
        (OUT / f"tilesmith_h200_{phase}.json").write_text(json.dumps(result, indent=2, default=str))
        summary = {k: result.get(k) for k in ("installed", "outputs_match_eager", "grads_match_eager",
                                              "benchmarks", "per_call_ms", "step_ms", "error", "seconds")
                   if k in result}
        print(json.dumps(summary, indent=2, default=str), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
