"""`tilesmith bench [DIR ...]`: Tilesmith against Inductor on a directory of KernelBench problems.

A problem is one Python file in the KernelBench format: `class Model(nn.Module)`,
`get_inputs()`, `get_init_inputs()`. Optional module attributes this runner understands:

    DTYPE = torch.bfloat16   parameters, buffers and floating inputs are cast to it (default: as
                             written, i.e. float32 for KernelBench files)
    TRAIN = True             time a training step: forward, loss, backward
    loss(out) -> Tensor      the training loss (default: mean of squares of every output)
    TOLERANCE = (atol, rtol) for the check against eager (default by dtype)

Each problem runs in its own child process with a deadline, so a crash, hang or CUDA fault
costs only that problem. Per problem and column (eager, Inductor default, Tilesmith with the
built-in search agent, and max-autotune-no-cudagraphs and reduce-overhead as references) the
child compiles, checks and keeps every column alive, then times them in alternation
(tileops.timing.time_alternating): one step of each column per cycle, the order rotating, so
drift within the process (clocks, host load, state left by the gate's work) falls on all columns
alike. Each step is bracketed by CUDA events after a device sync, so host-side launch overhead is
inside the interval; the median of many runs is reported with its spread, and each speedup over
Inductor is paired per cycle with the gate's estimator (tileops.timing.paired_ratio).
Every compiled column is checked against eager; Tilesmith's after its install. The parent
prints progress, writes JSON (merged with an earlier run under --resume), and a plot.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import copy
import datetime
import importlib.util
import json
import math
import os
import signal
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

COLUMNS = ("eager", "inductor", "tilesmith", "max_autotune", "reduce_overhead")
DEFAULT_COLUMNS = ("eager", "inductor", "tilesmith", "max_autotune", "reduce_overhead")
# What a user gets from torch with one argument: the oracle takes the fastest per graph.
ORACLE_COLUMNS = ("eager", "inductor", "max_autotune", "reduce_overhead")
# The order a child measures in: what the report needs most comes first, so a deadline that
# strikes mid-problem still leaves the main comparison.
MEASURE_ORDER = ("eager", "inductor", "tilesmith", "reduce_overhead", "max_autotune")
QUICK = (
    "tiny_mlp_fp32", "mha_small_bf16", "swiglu_mlp_bf16", "layernorm_gelu_bf16",
    "tiny_mlp_train_fp32", "cross_entropy_smoothing_bf16", "conv_bn_relu_eval_fp32",
    "timestep_embedding_fp32",
)


# ---- problems -----------------------------------------------------------------------------------

def default_suite() -> Path | None:
    here = Path(__file__).resolve()
    for root in (Path.cwd(), *here.parents):
        cand = root / "bench" / "suite"
        if cand.is_dir():
            return cand
    return None


def discover(dirs: list[str]) -> list[Path]:
    files: list[Path] = []
    for d in dirs:
        p = Path(d)
        if p.is_file() and p.suffix == ".py":
            files.append(p)
        elif p.is_dir():
            files.extend(sorted(f for f in p.glob("*.py") if not f.name.startswith("_")))
        else:
            raise SystemExit(f"tilesmith bench: {d} is neither a problem file nor a directory")
    return files


def load_problem(path: Path):
    spec = importlib.util.spec_from_file_location(f"tilesmith_bench_problem_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(mod, name):
            raise ImportError(f"{path.name} is not a KernelBench problem: no {name}")
    return mod


# ---- child: one problem -------------------------------------------------------------------------

def _tolerance(mod, dtype):
    import torch

    if hasattr(mod, "TOLERANCE"):
        return tuple(mod.TOLERANCE)
    if dtype in (torch.bfloat16, torch.float16):
        return (3e-2, 3e-2)
    return (2e-3, 2e-3)


def _flatten(out):
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    if isinstance(out, dict):
        return [t for k in sorted(out) for t in _flatten(out[k])]
    return []


# Elements compared at a time: the fp64 temporaries of a comparison stay small (128 MiB per
# operand) next to outputs of several GiB.
_COMPARE_CHUNK = 1 << 24


def _to_host(outputs) -> list:
    """Detached host copies: references kept for comparison take no device memory."""
    return [t.detach().to("cpu", copy=True) if t is not None else None for t in outputs]


def _compare(got, want, atol, rtol):
    """(max abs error, max error relative to the tolerance); <= 1 passes. Compared in chunks on
    the device of `got` (the reference, kept on the host, is brought over a chunk at a time), so
    no full-size temporary is made next to the outputs."""
    import torch

    worst_abs, worst_ratio = 0.0, 0.0
    if len(got) != len(want):
        return math.inf, math.inf
    for g, w in zip(got, want):
        if g is None or w is None:
            if (g is None) != (w is None):
                return math.inf, math.inf
            continue
        if g.shape != w.shape:
            return math.inf, math.inf
        g, w = g.detach().reshape(-1), w.detach().reshape(-1)
        for start in range(0, g.numel(), _COMPARE_CHUNK):
            gc = g[start:start + _COMPARE_CHUNK].to(torch.float64)
            wc = w[start:start + _COMPARE_CHUNK].to(g.device, torch.float64)
            finite = torch.isfinite(wc)
            if not torch.isfinite(gc).eq(finite).all():
                return math.inf, math.inf
            diff = (gc - wc).abs()[finite]
            if diff.numel() == 0:
                continue
            bound = atol + rtol * wc.abs()[finite]
            worst_abs = max(worst_abs, float(diff.max()))
            worst_ratio = max(worst_ratio, float((diff / bound).max()))
    return worst_abs, worst_ratio


class _Problem:
    def __init__(self, path: Path, seed: int, device: str):
        import torch

        self.path, self.seed, self.device = path, seed, device
        self.mod = load_problem(path)
        self.train = bool(getattr(self.mod, "TRAIN", False))
        self.dtype = getattr(self.mod, "DTYPE", None)
        torch.manual_seed(seed)
        init = self.mod.get_init_inputs()
        self.base_model = self.mod.Model(*init)
        self.base_model.to(device)
        if self.dtype is not None:
            self.base_model.to(self.dtype)
        torch.manual_seed(seed + 1)
        self.inputs = [self._place(x) for x in self.mod.get_inputs()]
        self.atol, self.rtol = _tolerance(self.mod, self.dtype or torch.float32)

    def _place(self, x):
        import torch

        if isinstance(x, torch.Tensor):
            x = x.to(self.device)
            if self.dtype is not None and x.is_floating_point():
                x = x.to(self.dtype)
        return x

    def fresh_model(self):
        return copy.deepcopy(self.base_model)

    def loss(self, out):
        if hasattr(self.mod, "loss"):
            return self.mod.loss(out)
        ts = _flatten(out)
        return sum(t.float().pow(2).mean() for t in ts if t.is_floating_point())

    def step_fn(self, model, fn, mark_step=False):
        """A callable running one step, and one returning what is compared against eager."""
        import torch

        inputs = self.inputs
        # reduce-overhead: tell cudagraph trees a new iteration starts (outputs of the last one
        # are no longer read), as its documentation asks of training and inference loops.
        begin = torch.compiler.cudagraph_mark_step_begin if mark_step else (lambda: None)
        if not self.train:
            def step():
                begin()
                with torch.no_grad():
                    return fn(*inputs)

            def observe():
                return _flatten(step())

            return step, observe
        params = [p for p in model.parameters() if p.requires_grad]

        def step():
            begin()
            for p in params:
                p.grad = None
            out = fn(*inputs)
            self.loss(out).backward()
            return out

        def observe():
            out = step()
            return _flatten(out) + [p.grad for p in params]

        return step, observe


def _settle(tilesmith, fn, step, max_steps: int = 400) -> int:
    """Steps until no graph is still in its in-place check (each installed graph alternates with
    Inductor's code for its first calls, then keeps or rolls back): what is timed afterwards is
    the final choice. Returns the steps taken."""
    for n in range(max_steps):
        try:
            graphs = tilesmith.diagnostics(fn)
        except TypeError:  # plain torch.compile (no route to a model): nothing to settle
            return n
        if not any("checking in place" in d.status for d in graphs):
            return n
        step()
    return max_steps


def _stats(ms: list[float]) -> dict:
    ms = sorted(ms)
    q = lambda f: ms[min(len(ms) - 1, int(f * (len(ms) - 1) + 0.5))]  # noqa: E731
    med = statistics.median(ms)
    return {"ms": med, "p10_ms": q(0.10), "p90_ms": q(0.90),
            "spread_pct": 100.0 * (q(0.90) - q(0.10)) / med if med > 0 else 0.0, "runs": len(ms)}


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _runs_for(step, device, min_runs: int, max_runs: int, target_s: float) -> int:
    """Warms `step` up and sizes a measurement of about target_s seconds from one timed batch."""
    for _ in range(3):
        step()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(5):
        step()
    _sync(device)
    per = max((time.perf_counter() - t0) / 5, 1e-6)
    return int(min(max_runs, max(min_runs, target_s / per)))


def _sample(steps: list, device, runs: int) -> list[list[float]]:
    """`runs` cycles of one call of each step, in ms per step (tileops.timing.time_alternating:
    the order rotating each cycle). On CUDA each call is bracketed by events after a device sync
    and nothing flushes the L2 between calls, so a step costs what it costs in a training or
    inference loop, host-side launch overhead included (GPU idle while Python launches); on the
    CPU (CI) it is wall-clock with perf_counter."""
    from tileops import timing

    per_step = timing.time_alternating(steps, runs, None, warmup=0, host_lead_cycles=None,
                                       device=device)
    return [[us / 1000.0 for us in times] for times in per_step]


def _timer(device) -> dict:
    return {"timer": "cuda_events" if device.type == "cuda" else "perf_counter"}


def _time(step, device, min_runs: int, max_runs: int, target_s: float):
    runs = _runs_for(step, device, min_runs, max_runs, target_s)
    return {**_stats(_sample([step], device, runs)[0]), **_timer(device)}


def _time_interleaved(steps: dict, device, min_runs: int, max_runs: int, target_s: float,
                      rounds: int = 6, baseline: str = "inductor") -> dict:
    """Times the columns in alternation, one step of each per cycle, the order rotating each
    cycle, so that whatever drifts within the process (clocks, host load, state left by earlier
    work) falls on every column alike, down to the millisecond: on the H200 host a host-bound
    step drifted by up to 1.8x between blocks of a few hundred steps, which timing the columns
    in blocks turned into a 0.69-1.10x spread of the ratio between two copies of the same code.
    Each column's figure is over all its steps; `round_medians_ms` splits the cycles into
    `rounds` consecutive parts, so drift still shows. Each other column also gets
    `paired_speedup`: the baseline's step over its step within each cycle (see _paired).
    {column: stats}."""
    runs = [_runs_for(s, device, min_runs, max_runs, target_s) for s in steps.values()]
    cycles = max(min_runs, min(max_runs, sorted(runs)[len(runs) // 2]))
    names = list(steps)
    samples = dict(zip(names, _sample([steps[c] for c in names], device, cycles)))
    per_round = {c: [statistics.median(part) for part in _split(ms, rounds)]
                 for c, ms in samples.items()}
    out = {c: {**_stats(ms), **_timer(device), "rounds": len(per_round[c]),
               "round_medians_ms": per_round[c]} for c, ms in samples.items()}
    if baseline in samples:
        for c in names:
            if c != baseline:
                out[c]["paired_speedup"] = _paired(samples[baseline], samples[c], rounds)
    return out


def _paired(base_ms: list[float], ms: list[float], rounds: int) -> dict:
    """Speedup over the baseline from the cycles' pairs: median over cycles of base[i] / ms[i].
    A host-bound step on the H200 host switches between regimes (e.g. 0.08 and 0.14 ms for the
    same call) that last hundreds of cycles; when a column's steps are split about evenly
    between two regimes its median lands on either side, and the ratio of two such medians
    read 0.90x for two copies of the same code (groupnorm_silu_fp32). Both steps of
    a cycle run within the same regime, so their ratio does not move with it; this is also how
    the gate compares (paired, per call), with the same estimator (tileops.timing.paired_ratio:
    ts::perf::paired_stats). `round_medians`: the same figure over `rounds` consecutive parts
    of the cycles (fewer where a part would hold fewer than two pairs)."""
    from tileops import timing

    pairs = [(b, m) for b, m in zip(base_ms, ms) if b > 0 and m > 0]
    if len(pairs) < 2:
        return {}

    def ratio(part: list) -> dict:
        return timing.paired_ratio([b for b, _ in part], [m for _, m in part])

    whole = ratio(pairs)
    return {"median": whole["ratio"], "p10": whole["ratio_p10"], "p90": whole["ratio_p90"],
            "ci_lower": whole["ratio_lower"], "ci_upper": whole["ratio_upper"],
            "pairs": whole["pairs"],
            "round_medians": [ratio(part)["ratio"]
                              for part in _split(pairs, min(rounds, len(pairs) // 2))]}


def _split(xs: list, parts: int) -> list[list]:
    """xs in `parts` consecutive, nearly equal, non-empty slices (fewer when xs is short)."""
    parts = max(1, min(parts, len(xs)))
    bounds = [round(i * len(xs) / parts) for i in range(parts + 1)]
    return [xs[a:b] for a, b in zip(bounds, bounds[1:])]


def _compile(column: str, model, inputs, agent_model: str, max_model_calls=None):
    import torch

    if column == "eager":
        return model
    if column == "inductor":
        return torch.compile(model)
    if column == "max_autotune":
        return torch.compile(model, mode="max-autotune-no-cudagraphs")
    if column == "reduce_overhead":
        return torch.compile(model, mode="reduce-overhead")
    if column == "tilesmith":
        import tilesmith

        compile_fn = getattr(tilesmith, "compile", None)
        if compile_fn is None:
            raise ImportError("tilesmith.compile is not available in this build")
        kwargs = {"example_inputs": tuple(inputs), "agent_model": agent_model}
        if max_model_calls is not None:
            import inspect

            with contextlib.suppress(TypeError, ValueError):
                if "max_model_calls" in inspect.signature(compile_fn).parameters:
                    kwargs["max_model_calls"] = max_model_calls
        return compile_fn(model, **kwargs)
    raise ValueError(column)


def run_child(path: Path, columns: list[str], out_path: Path, args) -> int:
    """Measures one problem; writes (and rewrites after each column) its JSON record."""
    import torch

    record = {"problem": path.stem, "file": str(path), "columns": {}, "status": "running"}

    def flush():
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record, indent=1, default=str))
        os.replace(tmp, out_path)

    try:
        if not torch.cuda.is_available() and args.device.startswith("cuda"):
            raise RuntimeError("CUDA is not available")
        device = torch.device(args.device)
        prob = _Problem(path, args.seed, args.device)
        record.update(train=prob.train, dtype=str(prob.dtype or "torch.float32"))
        eager_model = prob.fresh_model()
        _, observe_eager = prob.step_fn(eager_model, eager_model)
        torch.manual_seed(args.seed + 2)
        reference = _to_host(observe_eager())
        del eager_model
        inductor_out = None
        live: dict = {}  # column -> (step, fn, model): every column stays alive for the timing
        flush()

        def time_live() -> None:
            if len(live) < 2:
                return
            try:
                timed = _time_interleaved({c: v[0] for c, v in live.items()}, device,
                                          args.min_runs, args.max_runs, args.target_s)
            except torch.OutOfMemoryError as e:
                # Every live column's working set at once did not fit (an input of a third of
                # the card): each keeps its sequential figure, and the record says why.
                record["interleaved_error"] = f"OutOfMemoryError: {str(e).splitlines()[0]}"
                return
            for column, stats in timed.items():
                entry = record["columns"][column]
                entry.setdefault("ms_sequential", entry.get("ms"))
                entry.update(stats)
                entry["timing"] = "alternating"

        order = [c for c in MEASURE_ORDER if c in columns]
        for column in order:
            if column == order[-1] and column == "max_autotune" and len(live) > 1:
                # max-autotune's first compile can take minutes (fp32 training GEMMs: over
                # 250 s on the H200): time the others together first, so a deadline striking
                # during it still leaves every other column timed interleaved.
                time_live()
                record["interleaved_before"] = column
                flush()
            entry: dict = {}
            record["columns"][column] = entry
            failed = False
            try:
                # No dynamo reset between columns: each torch.compile has its own backend, and
                # dynamo keys its cache entries by backend, so the columns coexist.
                model = prob.fresh_model()
                t0 = time.perf_counter()
                fn = _compile(column, model, prob.inputs, args.agent_model, args.max_model_calls)
                step, observe = prob.step_fn(model, fn, mark_step=column == "reduce_overhead")
                torch.manual_seed(args.seed + 2)
                step()  # compiles; Tilesmith optimizes and installs on this first call
                if device.type == "cuda":
                    torch.cuda.synchronize(device)
                entry["first_call_s"] = time.perf_counter() - t0
                if column == "tilesmith":
                    import tilesmith

                    entry["settle_steps"] = _settle(tilesmith, fn, step)
                    bench = getattr(tilesmith, "benchmarks", lambda m: ())(fn)
                    entry["installed"] = len(bench) > 0
                    entry["graphs"] = [_plain(b) for b in bench]
                    diag = getattr(tilesmith, "diagnostics", None)
                    if diag is not None:
                        with contextlib.suppress(Exception):
                            graphs = diag(fn)
                            entry["diagnostics"] = [str(d) for d in graphs]
                            entry["tried"] = [{"graph": d.index, **t} for d in graphs
                                              for t in d.tried]
                torch.manual_seed(args.seed + 2)
                got = observe()  # after the install: this is what the user gets
                err_abs, err_ratio = _compare(got, reference, prob.atol, prob.rtol)
                entry["max_abs_err"] = err_abs
                entry["err_vs_tolerance"] = err_ratio
                correct = err_ratio <= 1.0
                if column == "inductor":
                    inductor_out = _to_host(got)
                elif inductor_out is not None and column != "eager":
                    # Against Inductor default too: the same kernels must give the same numbers,
                    # even where Inductor itself drifts from eager beyond the tolerance.
                    ind_abs, ind_ratio = _compare(got, inductor_out, prob.atol, prob.rtol)
                    entry["max_abs_err_vs_inductor"] = ind_abs
                    correct = correct or ind_ratio <= 1.0
                entry["correct"] = correct
                # The outputs go before the timing: next to the inputs and the step's own outputs
                # they could be what no longer fits (an input of a third of the card).
                del observe, got
                # A short timing now, so a deadline striking later still leaves a figure; the
                # interleaved timing below replaces it (and keeps it as ms_sequential).
                entry.update(_time(step, device, max(5, args.min_runs // 3), args.max_runs,
                                   args.target_s / 4))
                entry["timing"] = "sequential"
                entry["status"] = "ok"
                live[column] = (step, fn, model)
            except Exception as e:  # one column failing does not end the problem
                entry["status"] = "error"
                entry["error"] = f"{type(e).__name__}: {e}"
                entry["traceback"] = traceback.format_exc(limit=8)[-4000:]
                failed = True
            if failed:  # after the except block: its traceback no longer holds the frames
                model = fn = step = observe = None
                _release_failed_column(column, device)
            flush()
        time_live()
        record.pop("interleaved_before", None)
        live.clear()
        record["status"] = "ok"
    except Exception as e:
        record["status"] = "error"
        record["error"] = f"{type(e).__name__}: {e}"
        record["traceback"] = traceback.format_exc(limit=8)[-4000:]
    flush()
    return 0


def _release_failed_column(column: str, device) -> None:
    """What a failed column still holds goes before the next column runs: reduce-overhead's
    CUDA graph pool above all (its static input copies and outputs), which is as large as the
    inputs and would make every later column run out of memory too."""
    import gc

    import torch

    gc.collect()
    if column == "reduce_overhead":
        with contextlib.suppress(Exception):
            from torch._inductor import cudagraph_trees

            cudagraph_trees.reset_cudagraph_trees()
    if device.type == "cuda":
        torch.cuda.empty_cache()


# ---- parent: the run ----------------------------------------------------------------------------

def _derive(record: dict) -> dict:
    cols = record.get("columns", {})

    def ms(c):
        e = cols.get(c, {})
        return e.get("ms") if e.get("status") == "ok" else None

    base = ms("inductor")
    # The paired figure where the columns were timed interleaved (_paired says why); a record
    # from before it, or timed sequentially, has only the ratio of the two medians.
    of_medians: dict = {}
    for c in ("tilesmith", "max_autotune", "reduce_overhead", "eager"):
        v = ms(c)
        of_medians[c] = base / v if base and v else None
        paired = cols.get(c, {}).get("paired_speedup") or {}
        record[f"speedup_{c}"] = paired.get("median") if of_medians[c] and paired else of_medians[c]
    record["speedup_of_medians"] = of_medians
    # The per-graph oracle: the fastest of what torch offers with one argument (Inductor default
    # counts as 1.0x). Every figure is over Inductor from the same process, so Tilesmith over the
    # oracle is the ratio of the two speedups.
    offered = {c: record.get(f"speedup_{c}") for c in ORACLE_COLUMNS if c != "inductor"}
    offered = {c: v for c, v in offered.items() if v}
    if base:
        offered["inductor"] = 1.0
    record["oracle_column"] = max(offered, key=offered.get) if offered else None
    record["oracle_columns"] = sorted(offered)
    ts_speedup = record.get("speedup_tilesmith")
    record["speedup_oracle"] = (ts_speedup / offered[record["oracle_column"]]
                                if ts_speedup and offered else None)
    record["speedup_estimator"] = ("paired" if cols.get("tilesmith", {}).get("paired_speedup")
                                   else "ratio_of_medians")
    # Per round: whether a small gap holds in every part of the run or is one part's drift.
    paired_ts = cols.get("tilesmith", {}).get("paired_speedup") or {}
    ind_r, ts_r = cols.get("inductor", {}).get("round_medians_ms"), cols.get("tilesmith", {}).get(
        "round_medians_ms")
    if paired_ts.get("round_medians") and base and ms("tilesmith"):
        record["speedup_tilesmith_by_round"] = paired_ts["round_medians"]
    elif ind_r and ts_r and len(ind_r) == len(ts_r) and base and ms("tilesmith"):
        record["speedup_tilesmith_by_round"] = [i / t for i, t in zip(ind_r, ts_r) if t > 0]
    ts = cols.get("tilesmith", {})
    record["installed"] = bool(ts.get("installed"))
    record["rewrites"] = sorted({k for g in ts.get("graphs") or [] for k in g.get("rewrites") or ()})
    record["tried_rewrites"] = sorted({k for t in ts.get("tried") or [] for k in t.get("rewrites")
                                       or ()})
    record["incorrect_install"] = bool(ts.get("installed")) and ts.get("correct") is False
    return record


def _geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(records: list[dict]) -> dict:
    done = [r for r in records if r.get("speedup_tilesmith")]
    summary = {
        "problems": len(records),
        "measured": len(done),
        "installed": sum(1 for r in records if r.get("installed")),
        "incorrect_installs": sum(1 for r in records if r.get("incorrect_install")),
        "errors": [r["problem"] for r in records if r.get("status") != "ok"],
    }
    for c in ("tilesmith", "max_autotune", "reduce_overhead", "eager"):
        summary[f"geomean_{c}"] = _geomean([r.get(f"speedup_{c}") for r in records])
    # The headline: Tilesmith over each graph's oracle, on the rows where every one of its
    # columns was measured (a row missing one would flatter Tilesmith).
    full = [r for r in done if r.get("speedup_oracle") and
            len(r.get("oracle_columns") or ()) == len(ORACLE_COLUMNS)]
    summary["geomean_oracle"] = _geomean([r["speedup_oracle"] for r in full])
    summary["oracle_measured"] = len(full)
    summary["below_oracle"] = sorted(r["problem"] for r in full if r["speedup_oracle"] < 1.0)
    summary["oracle_wins"] = dict(collections.Counter(r["oracle_column"] for r in full))
    # Which kinds of rewrite were installed where (a problem may combine several graphs' kinds).
    wins: dict = {}
    for r in done:
        for k in r.get("rewrites") or ():
            wins.setdefault(k, []).append(r["problem"])
    summary["installed_by_rewrite"] = wins
    # Which kinds the gate judged where, installed or not.
    tried: dict = {}
    for r in records:
        for k in r.get("tried_rewrites") or ():
            tried.setdefault(k, []).append(r["problem"])
    summary["tried_by_rewrite"] = tried
    summary["speedup_estimators"] = {e: sum(1 for r in done if r.get("speedup_estimator") == e)
                                     for e in ("paired", "ratio_of_medians")}
    summary["devices"] = dict(sorted(collections.Counter(
        r["device"] for r in done if r.get("device")).items()))
    sp = [r["speedup_tilesmith"] for r in done]
    summary["min_speedup_tilesmith"] = min(sp) if sp else None
    # The same geomean on the problems where every reference column was measured too.
    both = [r for r in done if r.get("speedup_max_autotune")]
    summary["geomean_tilesmith_where_max_autotune"] = _geomean([r["speedup_tilesmith"] for r in both])
    summary["geomean_max_autotune_same_set"] = _geomean([r["speedup_max_autotune"] for r in both])
    return summary


def _fmt(x, spec=".3f", none="-"):
    return none if x is None else format(x, spec)


def print_table(records: list[dict], summary: dict, out=sys.stdout):
    mixed = len(summary.get("devices") or {}) > 1  # name each row's GPU only where cards differ
    x = lambda v: "n/a" if v is None else f"{v:.3f}x"  # noqa: E731
    print(f"geomean speedup over the per-graph oracle (the fastest of eager, Inductor default, "
          f"max-autotune-no-cudagraphs, reduce-overhead): {x(summary.get('geomean_oracle'))} on "
          f"{summary.get('oracle_measured', 0)} problems with every column measured; below the "
          f"oracle on {len(summary.get('below_oracle') or ())}", file=out)
    head = f"{'problem':34s} {'inductor':>9s} {'tilesmith':>9s} {'speedup':>8s} {'/oracle':>8s} " \
           f"{'inst':>4s} {'ok':>3s} {'max-at':>9s} {'red-ovh':>9s} {'eager':>9s}"
    print(head, file=out)
    print("-" * len(head), file=out)
    for r in records:
        c = r.get("columns", {})
        m = lambda k: c.get(k, {}).get("ms") if c.get(k, {}).get("status") == "ok" else None  # noqa: E731
        ts = c.get("tilesmith", {})
        ok = "-" if "correct" not in ts else ("yes" if ts["correct"] else "NO")
        line = (f"{r['problem'][:34]:34s} {_fmt(m('inductor')):>9s} {_fmt(m('tilesmith')):>9s} "
                f"{_fmt(r.get('speedup_tilesmith'), '.2f') + 'x' if r.get('speedup_tilesmith') else '-':>8s} "
                f"{_fmt(r.get('speedup_oracle'), '.2f') + 'x' if r.get('speedup_oracle') else '-':>8s} "
                f"{'yes' if r.get('installed') else 'no':>4s} {ok:>3s} {_fmt(m('max_autotune')):>9s} "
                f"{_fmt(m('reduce_overhead')):>9s} {_fmt(m('eager')):>9s}")
        by_round = r.get("speedup_tilesmith_by_round")
        if by_round:
            line += f"  rounds {min(by_round):.2f}-{max(by_round):.2f}x"
        if r.get("rewrites"):
            line += f"  ({', '.join(r['rewrites'])})"
        if mixed and r.get("device"):
            line += f"  [{r['device']}]"
        if r.get("status") != "ok":
            line += f"  [{r.get('status')}: {str(r.get('error', ''))[:60]}]"
        elif ts.get("status") == "error":
            line += f"  [tilesmith: {ts.get('error', '')[:60]}]"
        late = [k for k, e in c.items() if e.get("status") == "timeout"]
        if late and r.get("status") == "ok":
            line += f"  [{', '.join(late)}: timeout]"
        print(line, file=out)
    print("-" * len(head), file=out)
    print(f"geomean speedup over Inductor default: tilesmith {x(summary['geomean_tilesmith'])}, "
          f"max-autotune-no-cudagraphs {x(summary['geomean_max_autotune'])}, "
          f"reduce-overhead {x(summary['geomean_reduce_overhead'])} "
          f"({summary['measured']} of {summary['problems']} measured, {summary['installed']} installed, "
          f"{summary['incorrect_installs']} incorrect installs, min {x(summary['min_speedup_tilesmith'])})",
          file=out)
    tried, wins = summary.get("tried_by_rewrite") or {}, summary.get("installed_by_rewrite") or {}
    if tried:
        print("judged by the gate, by rewrite kind: " + "; ".join(
            f"{k} on {len(v)} problems (installed on {len(wins.get(k, []))})"
            for k, v in sorted(tried.items())), file=out)
    if mixed:
        print("rows measured on: " + ", ".join(f"{g} ({n})" for g, n in summary["devices"].items())
              + "; each row's columns share one GPU and one process", file=out)


def write_plot(records: list[dict], path: Path) -> Path:
    """Speedup over Inductor per problem (bars) for each column, titled with Tilesmith's geomean
    over the per-graph oracle; PNG with matplotlib, else SVG."""
    rows = [r for r in records if r.get("speedup_tilesmith") or r.get("speedup_max_autotune")]
    summary = summarize(records)
    title = ("Tilesmith over the per-graph oracle (fastest of eager, default, max-autotune, "
             "reduce-overhead): geomean "
             + ("n/a" if summary["geomean_oracle"] is None else f"{summary['geomean_oracle']:.3f}x")
             + f" on {summary['oracle_measured']} problems")
    series = [("tilesmith", "#2a7ab9"), ("max_autotune", "#e08e2b"), ("reduce_overhead", "#7a9a3a")]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        if path.suffix.lower() == ".svg":
            raise ImportError  # asked for SVG: write our own
        fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(rows) + 2), 5))
        w = 0.27
        for k, (name, color) in enumerate(series):
            ys = [r.get(f"speedup_{name}") or 0 for r in rows]
            ax.bar([i + (k - 1) * w for i in range(len(rows))], ys, w, label=name, color=color)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([r["problem"] for r in rows], rotation=70, ha="right", fontsize=7)
        ax.set_ylabel("speedup over Inductor default (higher is better)")
        ax.set_title(title, fontsize=9)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=130)
        plt.close(fig)
        return path
    except ImportError:
        path = path.with_suffix(".svg")
        bar_w, gap, h, top, left = 9, 8, 320, 30, 60
        width = left + len(rows) * (3 * bar_w + gap) + 20
        ymax = max([1.5] + [r.get(f"speedup_{n}") or 0 for r in rows for n, _ in series])
        y = lambda v: top + h - h * v / ymax  # noqa: E731
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{top + h + 150}" '
                 f'font-family="sans-serif" font-size="10">',
                 f'<text x="{left}" y="16">speedup over Inductor default. {title}</text>']
        for tick in range(0, int(ymax * 2) + 1):
            v = tick / 2
            parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                         f'stroke="{"#000" if v == 1 else "#ddd"}"/>'
                         f'<text x="{left - 30}" y="{y(v) + 3:.1f}">{v:.1f}x</text>')
        for i, r in enumerate(rows):
            x0 = left + i * (3 * bar_w + gap)
            for k, (name, color) in enumerate(series):
                v = r.get(f"speedup_{name}") or 0
                parts.append(f'<rect x="{x0 + k * bar_w}" y="{y(v):.1f}" width="{bar_w - 1}" '
                             f'height="{top + h - y(v):.1f}" fill="{color}"><title>{r["problem"]} '
                             f'{name} {v:.3f}x</title></rect>')
            parts.append(f'<text transform="translate({x0 + 10},{top + h + 8}) rotate(60)">'
                         f'{r["problem"]}</text>')
        for k, (name, color) in enumerate(series):
            parts.append(f'<rect x="{left + 200 + 110 * k}" y="6" width="10" height="10" fill="{color}"/>'
                         f'<text x="{left + 214 + 110 * k}" y="15">{name}</text>')
        parts.append("</svg>")
        path.write_text("\n".join(parts))
        return path


_CHILD_BOOT = ("import runpy, sys; sys.argv = sys.argv[1:]; "
               "runpy.run_path(sys.argv[0], run_name='__main__')")


def _plain(record):
    """A JSON-able view of a tilesmith.benchmarks() record (dict, dataclass or object)."""
    import dataclasses

    if isinstance(record, dict):
        return record
    if dataclasses.is_dataclass(record):
        return dataclasses.asdict(record)
    if hasattr(record, "_asdict"):
        return record._asdict()
    return getattr(record, "__dict__", None) or str(record)


def _run_one(path: Path, columns, deadline_s: float, args, log) -> dict:
    with tempfile.TemporaryDirectory(prefix="tilesmith-bench-") as tmp:
        out = Path(tmp) / "record.json"
        # The child runs this file as a script, so a tilesmith package that cannot be imported
        # costs only the tilesmith column (reported per problem), not the whole run.
        cmd = [args.python, "-c", _CHILD_BOOT, str(Path(__file__).resolve()), "--child", str(path),
               "--record", str(out),
               "--columns", ",".join(columns), "--seed", str(args.seed), "--device", args.device,
               "--agent-model", args.agent_model, "--min-runs", str(args.min_runs),
               "--max-model-calls", str(args.max_model_calls),
               "--max-runs", str(args.max_runs), "--target-s", str(args.target_s)]
        t0 = time.monotonic()
        # The C++ runner: the deadline kills the problem's whole tree (processes that left its
        # session included), and no pipe a stray still holds is waited on.
        from tilesmith import _core
        run = _core.proc_run(cmd, inherit_env=True, timeout_s=deadline_s, kill_grace_s=10.0,
                               stdout_cap=8 << 20, stderr_cap=8 << 20, contain=True)
        status = "timeout" if run.timed_out else None
        text = (run.stdout + run.stderr).decode(errors="replace")
        how = f"signal {run.term_signal} ({_signal_name(run.term_signal)})" if run.term_signal \
            else f"exit {run.exit_code}"
        if log is not None:
            log.write(f"===== {path.stem} ({how}, {time.monotonic() - t0:.1f}s)\n")
            log.write(text[-200_000:])
            log.flush()
        try:
            record = json.loads(out.read_text())
        except (OSError, ValueError):
            record = {"problem": path.stem, "file": str(path), "columns": {}}
        record["wall_s"] = time.monotonic() - t0
        if status == "timeout":
            late = record.get("interleaved_before")
            if late:
                # Every column before `late` was measured and timed together: keep them, and
                # say so where this reference column did not finish its first call.
                cols = record.setdefault("columns", {})
                if cols.get(late, {}).get("status") is None:
                    cols[late] = {"status": "timeout", "error": "first call still running at "
                                  f"the problem's deadline of {deadline_s:.0f}s"}
                record["status"] = "ok"
            else:
                record["status"] = "timeout"
                record["error"] = f"deadline of {deadline_s:.0f}s passed"
        elif not run.succeeded or record.get("status") in (None, "running"):
            record["status"] = "crashed" if record.get("status") in (None, "running") else record["status"]
            tail = "\n".join(text.strip().splitlines()[-8:])[-600:]
            record["error"] = record.get("error") or f"{how}; last output: {tail}"
        return _derive(record)


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


def main_run(args) -> int:
    dirs = args.dirs or ([str(default_suite())] if default_suite() else [])
    if not dirs:
        print("tilesmith bench: no problem directory given and no bench/suite found", file=sys.stderr)
        return 2
    files = discover(dirs)
    wanted = None
    if args.problems:
        wanted = [p.strip() for p in args.problems.split(",") if p.strip()]
    elif args.quick:
        wanted = list(QUICK)
    if args.part:
        k, n = args.part
        pool = wanted if wanted is not None else [f.stem for f in files]
        wanted = pool[k - 1::n]
    if wanted is not None:
        by_stem = {f.stem: f for f in files}
        missing = [w for w in wanted if w not in by_stem]
        if missing:
            print(f"tilesmith bench: no such problem(s): {', '.join(missing)}", file=sys.stderr)
            return 2
        files = [by_stem[w] for w in wanted]
    columns = [c.strip() for c in args.columns.split(",") if c.strip()]
    for c in columns:
        if c not in COLUMNS:
            print(f"tilesmith bench: unknown column {c!r} (have {', '.join(COLUMNS)})", file=sys.stderr)
            return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    previous: dict[str, dict] = {}
    if args.resume and out.exists():
        with contextlib.suppress(ValueError, KeyError):
            earlier_doc = json.loads(out.read_text())
            # Rows from a file written before rows carried their GPU took the file's.
            earlier_gpu = earlier_doc.get("meta", {}).get("device")
            previous = {r["problem"]: ({"device": earlier_gpu, **r} if earlier_gpu else r)
                        for r in earlier_doc["records"]}
    # Measured before, but to be measured again: the earlier record stays until a new one is
    # complete, so a rerun the budget does not reach, or one that fails, loses nothing.
    rerun = {name.strip() for name in (args.rerun or "").split(",") if name.strip()}
    log = open(args.log, "a") if args.log else None
    started = time.monotonic()
    records: dict[str, dict] = dict(previous)
    todo = [f for f in files if f.stem in rerun
            or not (f.stem in previous and previous[f.stem].get("status") == "ok")]
    print(f"tilesmith bench: {len(todo)} problem(s) to run ({len(files) - len(todo)} kept from "
          f"{out}), columns {', '.join(columns)}", file=sys.stderr)
    kept_named = [f.stem for f in files if f not in todo] if args.problems else []
    if kept_named:  # asked for by name, yet not measured: say how to measure them again
        print(f"tilesmith bench: {', '.join(kept_named)}: finished in {out}, kept as measured "
              f"then; --rerun {','.join(kept_named)} measures them again", file=sys.stderr)

    versions = _versions()  # one process, one GPU: read once, named by the file and each new row

    def save():
        ordered = [records[k] for k in sorted(records)]
        doc = {
            "meta": {
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "columns": columns,
                "agent_model": args.agent_model,
                "seed": args.seed,
                "method": "CUDA events per step, device synchronized before each start event "
                          "(host overhead included); the columns timed in alternation, one "
                          "step of each per cycle, the order rotating, in one process (rows "
                          "whose columns say timing 'interleaved' were timed in rotating "
                          "blocks by an earlier version); median of N runs, spread = p90-p10 over "
                          "median; speedup = median over cycles of the inductor step over the "
                          "column's step in the same cycle (ts::perf::paired_stats, the gate's "
                          "estimator; ci_lower-ci_upper its 95% interval; rows whose "
                          "speedup_estimator says "
                          "ratio_of_medians: inductor median over the column's median); each "
                          "problem in its own process",
                "python": sys.version.split()[0],
                **versions,
            },
            "summary": summarize(ordered),
            "records": ordered,
        }
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1, default=str))
        os.replace(tmp, out)
        return ordered, doc["summary"]

    gpu = versions.get("device")  # each row names its GPU: a resumed file may mix cards
    for i, f in enumerate(todo, 1):
        left = args.time_budget - (time.monotonic() - started) if args.time_budget else None
        if left is not None and left < 45.0:  # too little for a compile and a measurement (35 s at least on the H200)
            print(f"[{i}/{len(todo)}] {f.stem}: skipped, the time budget is spent", file=sys.stderr)
            continue
        deadline = min(args.timeout, left) if left is not None else args.timeout
        print(f"[{i}/{len(todo)}] {f.stem} ...", end="", flush=True, file=sys.stderr)
        r = _run_one(f, columns, deadline, args, log)
        if gpu:
            r["device"] = gpu
        earlier = previous.get(f.stem)
        if r.get("status") != "ok" and earlier is not None and earlier.get("status") == "ok":
            records[f.stem] = {**earlier, "rerun_failed": f"{r.get('status')}: "
                               f"{str(r.get('error', ''))[:200]}"}
        else:
            records[f.stem] = r
        ts = r.get("columns", {}).get("tilesmith", {})
        note = r.get("status") if r.get("status") != "ok" else (
            f"tilesmith {_fmt(ts.get('ms'))} ms vs inductor "
            f"{_fmt(r.get('columns', {}).get('inductor', {}).get('ms'))} ms "
            f"({_fmt(r.get('speedup_tilesmith'), '.2f')}x, "
            f"{'installed' if r.get('installed') else 'not installed'}"
            f"{', INCORRECT' if r.get('incorrect_install') else ''})"
            if ts.get("status") == "ok" else f"tilesmith: {ts.get('error', 'not measured')[:80]}")
        print(f" {note} [{r['wall_s']:.0f}s]", file=sys.stderr)
        save()
    ordered, summary = save()
    print_table(ordered, summary)
    if args.plot:
        p = write_plot(ordered, Path(args.plot))
        print(f"plot: {p}", file=sys.stderr)
    print(f"json: {out}", file=sys.stderr)
    if log:
        log.close()
    return 0


def _versions() -> dict:
    v = {}
    with contextlib.suppress(Exception):
        import torch

        v["torch"] = torch.__version__
        v["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            v["device"] = torch.cuda.get_device_name()
    with contextlib.suppress(Exception):
        import triton

        v["triton"] = triton.__version__
    return v


def _part(text: str) -> tuple[int, int]:
    """--part K/N."""
    try:
        k, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N (two whole numbers)") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text!r}: want K/N with 1 <= K <= N")
    return k, n


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dirs", nargs="*", help="problem directories or files (default: bench/suite)")
    p.add_argument("--problems", help="comma-separated problem names (file stems) to run")
    p.add_argument("--quick", action="store_true", help=f"a representative subset: {', '.join(QUICK)}")
    p.add_argument("--part", type=_part,
                   help="K/N: every N-th problem from the K-th (split a run into N commands)")
    p.add_argument("--columns", default=",".join(DEFAULT_COLUMNS),
                   help=f"columns to measure (default all: {','.join(DEFAULT_COLUMNS)})")
    p.add_argument("--out", default="tilesmith-bench.json", help="JSON results (default %(default)s)")
    p.add_argument("--plot", default=None, help="plot file (.png with matplotlib, else .svg)")
    p.add_argument("--log", default=None, help="append every child's output here")
    p.add_argument("--resume", action="store_true", help="keep finished problems from --out")
    p.add_argument("--rerun", help="with --resume: comma-separated problems to measure again")
    p.add_argument("--timeout", type=float, default=600.0, help="deadline per problem, seconds")
    p.add_argument("--time-budget", type=float, default=None, help="stop starting problems after this many seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda")
    p.add_argument("--agent-model", default="tilesmith-search")
    p.add_argument("--max-model-calls", type=int, default=12,
                   help="model-call budget per tilesmith.compile, shared by its graphs (default %(default)s)")
    p.add_argument("--min-runs", type=int, default=30)
    p.add_argument("--max-runs", type=int, default=2000)
    p.add_argument("--target-s", type=float, default=1.0, help="timed seconds per column")
    p.add_argument("--python", default=sys.executable, help=argparse.SUPPRESS)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tilesmith bench", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--record", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return run_child(Path(args.child), args.columns.split(","), Path(args.record), args)
    return main_run(args)


if __name__ == "__main__":
    sys.exit(main())
