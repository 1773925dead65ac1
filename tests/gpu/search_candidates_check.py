"""On the GPU: the search agent's candidates against the real Inductor wrappers they rewrite.

    python tests/gpu/search_candidates_check.py CANDIDATE_DIR OUT_JSON

CANDIDATE_DIR holds `<name>.py` (an Inductor CUDA wrapper, with its get_args() footer) and
`<name>.<rewrites>.py` candidates written by the search_rewrite tool (dev/search_prepare.sh).
For every candidate, with the inputs of the wrapper's get_args():
  - outputs equal the original's (bitwise for the CUDA graph; within a dtype tolerance where
    autotuning may change a reduction order), over trials with fresh inputs and with the same
    inputs, in the same order, dtypes, sizes, strides and storage offsets;
  - aliasing is the original's: returned inputs are the very input objects, outputs share storage
    with inputs and with each other exactly where the original's do;
  - the effects on the inputs (donated buffers) are the original's;
  - outputs are fresh: a later call does not change an earlier call's outputs;
  - for the CUDA graph: the graph path really ran (captures, replays, no disabled reason);
  - timing (CUDA events, sync before each start, median of 100) of original and candidate, with
    the same inputs every call, fresh inputs every call, and three buffer sets in rotation
    refilled before each call (the gate's timing pattern; the refill is outside the interval).
"""

import json
import statistics
import sys
import time
from pathlib import Path

import torch
from torch._inductor.codecache import PyCodeCache


def load(path: Path):
    return PyCodeCache.load(path.read_text())


def clone_args(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]


def storage(t):
    return t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else None


def alias_pattern(outs, args):
    """Per output: which input it is, which input's storage it shares, which earlier output's."""
    pat = []
    for k, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            pat.append(("value", repr(o) if not isinstance(o, (int, float)) else o))
            continue
        is_input = next((i for i, a in enumerate(args) if a is o), None)
        in_storage = next((i for i, a in enumerate(args) if storage(a) == storage(o)), None)
        out_storage = next((j for j in range(k) if storage(outs[j]) == storage(o)), None)
        pat.append(("tensor", o.dtype, tuple(o.shape), o.stride(), o.storage_offset(), is_input,
                    in_storage, out_storage))
    return pat


def compare(a, b, exact):
    worst = 0.0
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            if x.shape != y.shape or x.dtype != y.dtype:
                return float("inf")
            if x.numel():
                d = (x.double() - y.double()).abs().max().item()
                worst = max(worst, d if d == d else float("inf"))
        elif x != y:
            return float("inf")
    return worst if not exact or worst == 0 else worst


def time_call(call, make_args, runs=100):
    for _ in range(5):
        call(make_args())
    torch.cuda.synchronize()
    ms = []
    for _ in range(runs):
        args = make_args()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        call(args)
        e.record()
        e.synchronize()
        ms.append(s.elapsed_time(e))
    return statistics.median(ms)


def check(original_path: Path, cand_path: Path):
    rec = {"wrapper": original_path.stem, "candidate": cand_path.name}
    orig, cand = load(original_path), load(cand_path)
    base = orig.get_args()
    exact = "autotune" not in cand_path.name
    tol = 0.0 if exact else 2e-2
    failures = []
    kept = None
    # Fresh inputs (new values, new addresses: the copied-in path, and the capture), then the same
    # input objects (stable addresses: in-place reads after a recapture), then fresh again (the
    # fallback when in-place inputs moved). Both sides see identical inputs and mutate them alike.
    schedule = ["fresh", "fresh", "fresh", "same", "same", "same", "same", "same", "fresh", "fresh"]
    for trial, what in enumerate(schedule):
        if what == "fresh":
            src = base if trial == 0 else [
                (t.clone().normal_() if t.is_floating_point() else t.clone())
                if isinstance(t, torch.Tensor) else t for t in base]
            a_orig, a_cand = clone_args(src), clone_args(src)
        out_o = orig.call(list(a_orig))
        out_c = cand.call(list(a_cand))
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        err = compare(out_c, out_o, exact)
        if err > tol:
            failures.append(f"trial {trial}: outputs differ by {err}")
        in_err = compare(a_cand, a_orig, exact)
        if in_err > tol:
            failures.append(f"trial {trial}: effects on the inputs differ by {in_err}")
        if alias_pattern(out_c, a_cand) != alias_pattern(out_o, a_orig):
            failures.append(f"trial {trial}: aliasing differs: {alias_pattern(out_c, a_cand)} vs "
                            f"{alias_pattern(out_o, a_orig)}")
        if kept is not None:
            prev_out, prev_copy = kept
            if compare(prev_out, prev_copy, True) != 0:
                failures.append(f"trial {trial}: the previous call's outputs changed")
        kept = (out_c, [o.clone() if isinstance(o, torch.Tensor) else o for o in out_c])
    runtime = getattr(cand, "_ts_graphed_call", None)
    if runtime is not None:
        rec["graph"] = {"captures": runtime.captures, "replays": runtime.replays,
                        "disabled": runtime.disabled}
        if runtime.disabled or runtime.replays == 0:
            failures.append(f"the graph path did not run: {runtime.disabled}")
    rec["failures"], rec["ok"] = failures, not failures
    if not torch.cuda.is_available():  # a CPU smoke run of this script: no timing
        return rec
    same = clone_args(base)
    rec["original_ms_same_inputs"] = time_call(orig.call, lambda: list(same))
    same_c = clone_args(base)
    rec["candidate_ms_same_inputs"] = time_call(cand.call, lambda: list(same_c))
    rec["original_ms_fresh_inputs"] = time_call(orig.call, lambda: clone_args(base))
    rec["candidate_ms_fresh_inputs"] = time_call(cand.call, lambda: clone_args(base))
    # The gate's pattern: three buffer sets per side in rotation, refilled before every call.
    sets_o = [clone_args(base) for _ in range(3)]
    sets_c = [clone_args(base) for _ in range(3)]
    turn = {"o": 0, "c": 0}

    def rotating(sets, side):
        def make():
            turn[side] += 1
            args = sets[turn[side] % 3]
            for a, b in zip(args, base):
                if isinstance(a, torch.Tensor):
                    a.copy_(b)
            return list(args)
        return make

    rec["original_ms_rotating_inputs"] = time_call(orig.call, rotating(sets_o, "o"))
    rec["candidate_ms_rotating_inputs"] = time_call(cand.call, rotating(sets_c, "c"))
    rec["speedup_rotating_inputs"] = (rec["original_ms_rotating_inputs"]
                                      / rec["candidate_ms_rotating_inputs"])
    rec["speedup_same_inputs"] = rec["original_ms_same_inputs"] / rec["candidate_ms_same_inputs"]
    rec["speedup_fresh_inputs"] = rec["original_ms_fresh_inputs"] / rec["candidate_ms_fresh_inputs"]
    rec["failures"] = failures
    rec["ok"] = not failures
    return rec


def main():
    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    records = []
    for cand in sorted(src.glob("*.*.py")):
        parts = cand.name.split(".")
        # <model>.<i>.<kind>.py originals have 4 parts; candidates add the rewrite before .py
        if len(parts) < 5:
            continue
        original = src / (".".join(parts[:3]) + ".py")
        t0 = time.time()
        try:
            rec = check(original, cand)
        except Exception as e:
            rec = {"wrapper": original.stem, "candidate": cand.name, "ok": False,
                   "failures": [f"{type(e).__name__}: {e}"]}
        rec["wall_s"] = time.time() - t0
        records.append(rec)
        print(f"{'ok  ' if rec['ok'] else 'FAIL'} {cand.name:60s} "
              f"same {rec.get('speedup_same_inputs', 0):.3f}x fresh {rec.get('speedup_fresh_inputs', 0):.3f}x "
              f"rotating {rec.get('speedup_rotating_inputs', 0):.3f}x "
              f"{rec.get('graph', '')} {'; '.join(rec['failures'])[:300]}", flush=True)
        out.write_text(json.dumps(records, indent=1, default=str))
    bad = [r for r in records if not r["ok"]]
    print(f"{len(records) - len(bad)} of {len(records)} candidates ok")
    return 1 if bad or not records else 0


if __name__ == "__main__":
    sys.exit(main())
