"""GPU tier of the gate: benchmarks and real Inductor wrappers, on CUDA.

    python3 scripts/gpu/gate_bench.py --out DIR [--reps 50] [--parts avsa,eval,inductor]

  avsa      A versus A on the corpus base graph sized to >= 100 us: --reps evaluations, none may
            be accepted; the paired-ratio CI half-width of each (target <= 1%).
  eval      wall time of one evaluation (correctness + timing + fresh confirmation) of the base
            graph sized to ~1 ms, honest candidate (accepted, so the confirmation runs), three
            times (target <= 10 s each); the worker server's start (once per graph, started
            with the gate so it overlaps the agent's first turn) is timed on its own.
  inductor  every real wrapper in tests/data/inductor_cuda/: A versus A (must be rejected) and
            generic attacks built from it (corrupted output, replayed result, side stream).
Writes DIR/gate_bench.json; prints one line per measurement.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402

from gate_corpus import CORPUS, base_args, base_source  # noqa: E402
from tilesmith.gate import Gate, GateOptions  # noqa: E402

INDUCTOR = ROOT / "tests" / "data" / "inductor_cuda"
SAVE = None  # writes gate_bench.json (set by main)


def log(msg: str) -> None:
    print(msg, flush=True)


def part_avsa(out: dict, reps: int, track: Path) -> None:
    src = (CORPUS / "a_vs_a.py").read_text()
    # x [512, 1024] @ w [1024, 1024], eight times in fp32: ~0.2 ms on an H200.
    args = base_args(512, 1024, 1024, device="cuda")
    res = {"reps": reps, "accepted": 0, "kinds": {}, "half_width_pct": [], "original_ms": [],
           "ratios": [], "seconds": []}
    with Gate(base_source(), args, track / "avsa", GateOptions(device="cuda")) as g:
        for i in range(reps):
            t0 = time.monotonic()
            r = g.evaluate(src, label=f"avsa{i}")
            res["seconds"].append(time.monotonic() - t0)
            res["accepted"] += r.verdict == "accepted"
            res["kinds"][r.kind] = res["kinds"].get(r.kind, 0) + 1
            if r.timing:
                res["half_width_pct"].append(r.timing["ci_half_width_pct"])
                res["original_ms"].append(r.timing["original_ms"])
                res["ratios"].append(r.timing["ratio"])
            log(f"avsa {i}: {r.reason}  [{res['seconds'][-1]:.1f}s]")
    hw = res["half_width_pct"]
    if hw:
        res["half_width_pct_median"] = statistics.median(hw)
        res["half_width_pct_max"] = max(hw)
        res["original_ms_median"] = statistics.median(res["original_ms"])
    res["pass"] = res["accepted"] == 0 and bool(hw) and max(hw) <= 1.0
    log(f"AVSA: {res['accepted']}/{reps} accepted (must be 0); CI half-width median "
        f"{res.get('half_width_pct_median', float('nan')):.3f}% max "
        f"{res.get('half_width_pct_max', float('nan')):.3f}% (target <= 1%) on a "
        f"{res.get('original_ms_median', float('nan')):.3f} ms graph")
    out["avsa"] = res


def part_eval(out: dict, track: Path) -> None:
    honest = (CORPUS / "honest_single_matmul.py").read_text()
    # x [768, 2048] @ w [2048, 2048], eight times in fp32: ~1 ms on an H200.
    args = base_args(768, 2048, 2048, device="cuda")
    res = {}
    t0 = time.monotonic()
    g = Gate(base_source(), args, track / "eval", GateOptions(device="cuda"))
    res["gate_init_s"] = time.monotonic() - t0
    # The worker server (torch and Inductor's runtime imported once per graph) starts when the
    # gate is built, so in Tilesmith it overlaps the agent's first turn; timed here on its own.
    res["server_start_s"] = g.wait_ready() + res["gate_init_s"]
    try:
        times, reasons = [], []
        for i in range(3):
            t0 = time.monotonic()
            r = g.evaluate(honest, label=f"honest{i}")
            times.append(time.monotonic() - t0)
            reasons.append(r.reason)
            log(f"eval {i}: {r.reason} original {r.timing['original_ms'] if r.timing else 0:.3f} ms "
                f"[{times[-1]:.2f}s]")
            res.setdefault("original_ms", r.timing["original_ms"] if r.timing else None)
            res.setdefault("phases", []).append(
                [{"host_s": p["worker"].get("wall_s"), **{k: p["info"].get(k) for k in
                  ("setup_s", "correctness_s", "timing_s")}} for p in r.to_dict()["phases"]])
        res["worker_server"] = r.to_dict().get("worker_server")
        log(f"eval worker server: {res['worker_server']}")
        res["cold_s"] = times[0]
        res["warm_s"] = times[1:]
        res["reasons"] = reasons
        res["all_accepted"] = all(x.startswith("accepted") for x in reasons)
        res["pass"] = res["all_accepted"] and max(times) <= 10.0
    finally:
        g.close()
    log(f"EVAL: one evaluation incl. confirmation of a {res.get('original_ms') or 0:.3f} ms graph: "
        f"first {res['cold_s']:.2f} s, then {', '.join(f'{t:.2f}' for t in res['warm_s'])} s "
        f"(target <= 10 s); worker server start {res['server_start_s']:.2f} s, once per graph")
    out["eval"] = res


CORRUPT = '''

_gate_orig_call = call


def call(args):
    out = _gate_orig_call(args)
    o = out[0]
    if o.dim():
        o[(0,) * o.dim()] += 1000.0
    else:
        o += 1000.0
    return out
'''

REPLAY = '''

_gate_orig_call = call
_gate_cache = None


def call(args):
    global _gate_cache
    if _gate_cache is None:
        _gate_cache = _gate_orig_call(args)
    else:
        args.clear()
    return _gate_cache
'''

SIDE_STREAM = '''

_gate_orig_call = call
_gate_stream = None


def call(args):
    global _gate_stream
    if _gate_stream is None:
        _gate_stream = torch.cuda.Stream()
    with torch.cuda.stream(_gate_stream):
        return _gate_orig_call(args)
'''

ATTACKS = {
    "corrupt_out0": (CORRUPT, {"incorrect"}),
    "replay": (REPLAY, {"caching", "incorrect", "aliasing", "mutation"}),
    # On a small graph the side stream may finish before anyone looks; it then gains nothing.
    "side_stream": (SIDE_STREAM, {"timing_suspicious", "incorrect", "not_faster", "too_noisy"}),
}


def part_inductor(out: dict, track: Path) -> None:
    graphs = json.loads((INDUCTOR / "graphs.json").read_text())
    res = {}
    for path in sorted(INDUCTOR.glob("*.py")):
        name = path.stem
        src = path.read_text()
        spec = importlib.util.spec_from_file_location(f"gate_bench_{name.replace('.', '_')}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # the original (trusted): only for its get_args()
        args = mod.get_args()
        info = graphs.get(name, {})
        row = {}
        with Gate(src, args, track / name,
                  GateOptions(device="cuda", static_input_idxs=info.get("static_input_idxs", []))) as g:
            t0 = time.monotonic()
            r = g.evaluate(src, label="avsa")
            row["avsa"] = {"reason": r.reason, "kind": r.kind, "s": time.monotonic() - t0,
                           "ok": r.verdict == "rejected" and r.kind in ("not_faster", "too_noisy"),
                           "timing": r.timing}
            for aname, (suffix, kinds) in ATTACKS.items():
                t0 = time.monotonic()
                r = g.evaluate(src + suffix, label=aname)
                row[aname] = {"reason": r.reason, "kind": r.kind, "s": time.monotonic() - t0,
                              "ok": r.verdict == "rejected" and r.kind in kinds}
        for k, v in row.items():
            log(f"inductor {name} {k}: {'OK ' if v['ok'] else 'BAD'} {v['reason']} [{v['s']:.1f}s]")
        res[name] = row
        out["inductor"] = res  # saved after each wrapper: a deadline keeps what was measured
        if SAVE is not None:
            SAVE()
        del args, mod
        torch.cuda.empty_cache()
    out["inductor"] = res
    bad = [(n, k) for n, row in res.items() for k, v in row.items() if not v["ok"]]
    out["inductor_pass"] = not bad
    log(f"INDUCTOR: {len(res)} wrappers, {sum(len(r) for r in res.values())} evaluations, "
        f"{len(bad)} unexpected: {bad}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--parts", default="avsa,eval,inductor")
    a = ap.parse_args()
    outdir = Path(a.out)
    outdir.mkdir(parents=True, exist_ok=True)
    assert torch.cuda.is_available(), "needs CUDA"
    result = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    parts = a.parts.split(",")
    global SAVE
    SAVE = lambda: (outdir / "gate_bench.json").write_text(  # noqa: E731
        json.dumps(result, indent=1, default=str))
    with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp:
        track = Path(tmp)
        for p in parts:
            t0 = time.monotonic()
            try:
                if p == "avsa":
                    part_avsa(result, a.reps, track)
                elif p == "eval":
                    part_eval(result, track)
                elif p == "inductor":
                    part_inductor(result, track)
            except Exception as e:  # keep the other parts' numbers
                import traceback

                traceback.print_exc()
                result[p + "_error"] = f"{type(e).__name__}: {e}"
            result[p + "_seconds"] = time.monotonic() - t0
            (outdir / "gate_bench.json").write_text(json.dumps(result, indent=1, default=str))
    ok = all(result.get(k, {}).get("pass", False) for k in ("avsa", "eval") if k in parts)
    if "inductor" in parts:
        ok = ok and result.get("inductor_pass", False)
    log(f"GATE BENCH {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
