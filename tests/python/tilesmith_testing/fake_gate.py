"""TEST DOUBLE of tilesmith.gate (python/tilesmith/gate), for the integration tests only; never
shipped. The real gate runs candidates in child processes with paired timing and
a confirmation run; this double runs them in the test process, compares outputs against the
original on fresh copies of the captured arguments, times a few calls each, and accepts every
candidate that is correct (it has no speed threshold). Each call is logged as a JSON line to
$TILESMITH_FAKE_GATE_LOG so tests can see what the integration handed it.

Install it before tilesmith needs the gate:  sys.modules["tilesmith.gate"] = fake_gate
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import sys
import time
import types

import torch


@dataclasses.dataclass
class GateOptions:
    device: str = "cuda"
    min_improvement: float = 0.02
    timeout_s: float = 120.0
    confirm: bool = True
    static_input_idxs: list = dataclasses.field(default_factory=list)
    seed: int = 0
    python: str = sys.executable
    sandbox: str = "required"


class GateUnavailable(RuntimeError):
    pass


@dataclasses.dataclass
class GateReport:
    verdict: str
    reason: str
    speedup: float = 0.0
    correctness: list = dataclasses.field(default_factory=list)
    timing: dict | None = None
    confirmed: bool = False

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def summary(self) -> str:
        return self.reason


def _log(event: dict) -> None:
    path = os.environ.get("TILESMITH_FAKE_GATE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(event) + "\n")


def _load(source: str) -> types.ModuleType:
    mod = types.ModuleType("fake_gate_module")
    exec(compile(source, "<candidate>", "exec"), mod.__dict__)
    return mod


def _clone(args):
    from torch._inductor.utils import clone_preserve_strides

    return [clone_preserve_strides(a) if isinstance(a, torch.Tensor) else a for a in args]


class Gate:
    def __init__(self, original_source, args, track_dir, options=GateOptions()):
        self.options = options
        self._args = _clone(args)
        self._profiles = os.path.join(os.fspath(track_dir), "profiles")
        os.makedirs(self._profiles, exist_ok=True)
        self._n = 0
        self.sandbox_note = "candidates run in the test process (test double)"
        self._original = _load(original_source)
        _log({"event": "init", "device": options.device,
              "static_input_idxs": list(options.static_input_idxs),
              "arg_ptrs": [a.data_ptr() for a in args if isinstance(a, torch.Tensor)],
              "header": original_source.splitlines()[0]})

    def _outputs(self, mod):
        torch.manual_seed(self.options.seed)
        with torch.no_grad():
            return mod.call(_clone(self._args))

    def _ms(self, mod, reps=5) -> float:
        times = []
        for _ in range(reps):
            args = _clone(self._args)
            t0 = time.perf_counter()
            mod.call(args)
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    def _correctness(self, candidate):
        ref = self._outputs(self._original)
        try:
            out = self._outputs(candidate)
        except Exception as e:
            return False, f"the candidate raised {type(e).__name__}: {e}"
        if len(out) != len(ref):
            return False, f"{len(out)} outputs, expected {len(ref)}"
        for i, (a, b) in enumerate(zip(out, ref)):
            if isinstance(b, torch.Tensor):
                if not isinstance(a, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                    return False, f"out[{i}] has the wrong type, shape or dtype"
                if not torch.allclose(a.float(), b.float(), atol=1e-5, rtol=1e-5):
                    err = (a.float() - b.float()).abs().max().item()
                    return False, f"out[{i}] max abs err {err:.3g} > 1e-5"
        return True, "outputs match the original"

    def _write(self, label, report):
        self._n += 1
        name = f"{self._n:02d}_{label or 'eval'}.json"
        with open(os.path.join(self._profiles, name), "w") as f:
            json.dump(report.to_dict(), f, indent=2)

    def evaluate(self, candidate_source, label=""):
        try:
            cand = _load(candidate_source)
        except Exception as e:
            report = GateReport("rejected", f"rejected: the candidate does not load ({e})")
            self._write(label, report)
            _log({"event": "evaluate", "verdict": report.verdict})
            return report
        ok, detail = self._correctness(cand)
        correctness = [{"input_class": "captured", "passed": ok, "detail": detail}]
        if not ok:
            report = GateReport("rejected", f"rejected: incorrect ({detail})",
                                correctness=correctness)
        else:
            orig_ms, cand_ms = self._ms(self._original), self._ms(cand)
            speedup = orig_ms / cand_ms if cand_ms > 0 else 0.0
            timing = {"original_ms": orig_ms, "candidate_ms": cand_ms, "ratio": speedup,
                      "ratio_lower": speedup, "ratio_upper": speedup, "pairs": 5,
                      "spread_pct": 0.0}
            report = GateReport("accepted", f"accepted: {speedup:.2f}x (test double: correct "
                                "candidates are accepted at any speed), confirmed",
                                speedup=speedup, correctness=correctness, timing=timing,
                                confirmed=True)
        self._write(label, report)
        _log({"event": "evaluate", "verdict": report.verdict})
        return report

    def check(self, candidate_source):
        try:
            ok, detail = self._correctness(_load(candidate_source))
        except Exception as e:
            ok, detail = False, f"the candidate does not load ({e})"
        report = GateReport("accepted" if ok else "rejected",
                            ("accepted: " if ok else "rejected: ") + detail,
                            correctness=[{"input_class": "captured", "passed": ok,
                                          "detail": detail}])
        self._write("check", report)
        _log({"event": "check", "verdict": report.verdict})
        return report

    def profile(self, candidate_source):
        return [{"kernel": "call", "original_ms": self._ms(self._original),
                 "candidate_ms": self._ms(_load(candidate_source))}]
