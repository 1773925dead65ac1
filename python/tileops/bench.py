"""`tileops bench`: every workload row and dtype of each implemented op's spec, timed against the
strongest other implementation on the same GPU, with the gap to the spec's roofline.

Method (stated in every report; timing.py): CUDA events around each run, the L2 flushed before
each run by reading a 256 MiB buffer at evict_last priority (a read leaves clean lines: a write
flush leaves the L2 full of dirty lines that the timed run then pays to write back, about 3 us on
the H200, 6% of a 50 us RoPE row; a read at normal priority leaves the lines that Inductor's
reductions load at evict_last), the host queued ahead of the GPU (a device-side sleep before the
timed runs, so launch overhead does not leak into the events), at least 50 runs, median with
p10-p90. A row's implementations are timed in alternation, one run of each per cycle with the
order rotating, so drift during the row (clocks, temperature) falls on all of them alike and the
ratio gets a spread of its own. Drift is real but mostly common to a row: the same build timed
twice in one command moved its medians by up to 1.8% on prefill rows and 10% on decode rows, the
baseline's with them, and the rows' ratios by at most 0.3% and 3% (H100, each
implementation in its own loop).
Each implementation's output is checked against torch's before it is timed.

Baselines: torch eager (the spec's ref_api through torch), torch.compile of the same, cuBLAS via
torch.matmul for GEMM, and every backend of F.scaled_dot_product_attention for attention (flash,
efficient, cuDNN; math only where it is small). The strongest baseline is the one of lowest median;
the row's ratio is the median over cycles of its time over ours (> 1: TileOPs is faster), with
p10-p90 of the same per-cycle ratios. Roofline: flops and bytes from the spec's formulas, peaks from
the hardware profile (h200 by default), evaluated by the C++ core.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import torch

from . import _kernels, manifest, ops, testing, timing
from .op import DTYPE_NAMES

METHOD = (f"CUDA events per run; L2 flushed ({timing.FLUSH_BYTES >> 20} MiB read at evict_last "
          "priority) before each run; host queued ahead (device sleep before the timed runs); "
          "a row's implementations alternated run by run; median of {runs} runs, spread p10-p90; "
          "ratio: median over runs of the strongest baseline's time over ours")


class _Timer:
    """tileops bench's timing (timing.py): one flush buffer; `runs` cycles per measurement, each
    calling every implementation once (timing.time_alternating)."""

    def __init__(self, runs: int, warmup: int = 5):
        self.runs, self.warmup = runs, warmup
        self.flush = timing.flush_buffer()

    def __call__(self, fns: dict) -> dict:
        """name -> statistics of that zero-argument function, its times in call order included
        (`cycle_us`, for the per-cycle ratio)."""
        names = list(fns)
        per_fn = timing.time_alternating([fns[n] for n in names], self.runs, self.flush,
                                         warmup=self.warmup)
        return {n: {**timing.summary(sorted(us)), "cycle_us": us} for n, us in zip(names, per_fn)}


def _time_all(timer, fns: dict) -> dict:
    """timer(fns); if that raises, each fn on its own, so one failing baseline leaves the others
    timed and reports its own error."""
    try:
        return timer(fns)
    except Exception:
        out = {}
        for name, fn in fns.items():
            try:
                out.update(timer({name: fn}))
            except Exception as e:
                out[name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
        return out


def _outputs(op_name, result, tensors, spec):
    if not spec.outputs:
        return [t for t, info in zip(tensors, spec.inputs) if info["mutated"]]
    return [result] if isinstance(result, torch.Tensor) else list(result)


def _max_rel_err(got, want) -> float:
    err = 0.0
    for g, w in zip(got, want):
        g, w = g.float(), w.float()
        scale = w.abs().max().item() if w.numel() else 0.0
        diff = (g - w).abs().max().item() if w.numel() else 0.0
        err = max(err, diff / scale if scale > 0 else diff)
    return err


def _baselines(spec, tensors, params, with_compile: bool):
    """name -> zero-argument callable, the strongest alternatives available for this op: the
    spec's reference in eager torch and under torch.compile; SDPA's backends for attention."""
    reference = testing.reference_function(spec)
    kwargs = testing.reference_kwargs(spec, tensors, params)

    def listed(fn):
        return lambda: testing.as_list(fn(**kwargs))

    out = {}
    if spec.name == "GEMMFwdOp":
        out["torch.matmul (cuBLAS)"] = listed(reference)
    elif spec.name == "MultiHeadAttentionFwdOp":
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel

        q, k, v = tensors
        backends = [("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION),
                    ("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                    ("sdpa-efficient", SDPBackend.EFFICIENT_ATTENTION)]
        if q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] <= 1 << 26:  # math only where small
            backends.append(("sdpa-math", SDPBackend.MATH))
        for name, backend in backends:
            def run(backend=backend):
                with sdpa_kernel(backend):
                    return [F.scaled_dot_product_attention(
                        q, k, v, is_causal=params.get("is_causal", False),
                        scale=params.get("scale"), enable_gqa=q.shape[1] != k.shape[1])]
            out[name] = run
    else:
        out["torch eager"] = listed(reference)
    if with_compile and spec.name not in ("GEMMFwdOp", "MultiHeadAttentionFwdOp"):
        # A fresh dynamo per row: every row compiles the same function, and the recompile limit
        # would otherwise turn later rows into eager runs labelled torch.compile.
        torch._dynamo.reset()
        out["torch.compile"] = listed(torch.compile(reference, dynamic=False))
    return out


def copy_bandwidth(timer, nbytes: int = 2 << 30) -> float:
    """TB/s of a device-to-device copy of `nbytes` (read and write counted), timed like the rows:
    the bandwidth a memory-bound op can actually reach on this GPU, measured in the same run."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = timer({"copy": lambda: dst.copy_(src)})["copy"]
    del src, dst
    return 2 * nbytes / (t["median_us"] * 1e-6) / 1e12


def selected_workloads(spec, dtype: str | None, label: str | None) -> list[dict]:
    """The spec's workload calls that `--dtype` and `--label` keep (all when unset)."""
    return [w for w in spec.workloads()
            if (not label or w["label"] == label) and (not dtype or f"={dtype}" in w["dtype_case"])]


def bench_op(op_name: str, timer, profile: str, with_compile: bool, dtype: str | None,
             label: str | None, first_only: bool, log, tuned: bool = False,
             device: str = "cuda", copy_tbps: float | None = None) -> list[dict]:
    """One row per workload call of `op_name`: every implementation checked against torch, then
    timed by `timer` (a callable taking {name: zero-argument function}, returning {name:
    statistics}; _Timer times them in alternation).
    With `copy_tbps` (copy_bandwidth()) each timing also gets its percent of that bandwidth."""
    spec = manifest.op(op_name)
    cls = ops.get(op_name)
    rows = []
    for w in selected_workloads(spec, dtype, label):
        roof = spec.roofline(w["bound"], profile)
        row = {"op": op_name, "workload": w["label"], "dtypes": w["dtype_case"],
               "inputs": [None if d is None else [d[0], list(d[1])] for d in w["inputs"]],
               "params": w["params"], "flops": roof["flops"], "bytes": roof["bytes"],
               "intensity": roof["intensity"], "bound": roof["bound"],
               "sol_us": roof["sol_seconds"] * 1e6, "peak_flops": roof["peak_flops"],
               "bandwidth": roof["bandwidth"], "impls": {}}
        rows.append(row)
        try:
            tensors = testing.make_inputs(spec, w["inputs"], device)
            params = {**cls().param_values, **w["params"]}
            op = cls(**params)
            if tuned:
                op.request_tune()  # the first call tunes this shape (outside the timed runs)
            ref = op(*tensors)
            ours = [o.clone() for o in _outputs(op_name, ref, tensors, spec)]
            ours_fresh = testing.make_inputs(spec, w["inputs"], device)  # mutated ops: pristine
            baselines = _baselines(spec, ours_fresh, params, with_compile)
            checks = {}
            for name, fn in baselines.items():
                try:
                    checks[name] = _max_rel_err(ours, fn())
                except Exception as e:  # a backend that does not serve this shape
                    row["impls"][name] = {"error": f"{type(e).__name__}: {str(e)[:160]}"}
            row["max_rel_err_vs"] = checks
            tol = testing.tolerance(spec, ours[0].dtype)[0] * 4 if ours else 0
            row["check"] = "ok" if all(v <= tol for v in checks.values()) else "MISMATCH"
            timed = {"tileops": lambda: op(*tensors)}
            timed.update((n, fn) for n, fn in baselines.items() if n not in row["impls"])
            row["impls"].update(_time_all(timer, timed))
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        _summarize(row, copy_tbps)
        log(format_row(row))
        if first_only:
            break
    return rows


def _summarize(row: dict, copy_tbps: float | None = None) -> None:
    for name, r in row["impls"].items():
        if "median_us" not in r:
            continue
        s = r["median_us"] * 1e-6
        r["tflops"] = row["flops"] / s / 1e12
        r["tbps"] = row["bytes"] / s / 1e12
        r["pct_roofline"] = 100.0 * row["sol_us"] / r["median_us"]
        if copy_tbps:
            r["pct_of_copy"] = 100.0 * r["tbps"] / copy_tbps
    ours = row["impls"].get("tileops", {})
    others = {n: r for n, r in row["impls"].items() if n != "tileops" and "median_us" in r}
    if others:
        best = min(others, key=lambda n: others[n]["median_us"])
        row["best_baseline"] = best
        if "median_us" in ours:
            base, mine = others[best].get("cycle_us"), ours.get("cycle_us")
            if base and mine and len(base) == len(mine) > 1:
                paired = timing.paired_ratio(base, mine)
                row["ratio_vs_best"] = paired["ratio"]
                row["ratio_p10"], row["ratio_p90"] = paired["ratio_p10"], paired["ratio_p90"]
            else:  # timed apart (a fallback after an error): the ratio of the medians
                row["ratio_vs_best"] = others[best]["median_us"] / ours["median_us"]


HEADER = (f"{'op':<24} {'workload':<26} {'dtypes':<12} {'bound':<7} {'SOL us':>8} "
          f"{'us (p10-p90)':>22} {'TFLOP/s':>8} "
          f"{'TB/s':>6} {'%roof':>6} {'%copy':>6}  {'strongest baseline':<22} {'us':>9} "
          f"{'ratio (p10-p90)':>18}  check")


def format_row(row: dict) -> str:
    ours = row["impls"].get("tileops", {})
    head = (f"{row['op']:<24} {row['workload']:<26} {row['dtypes']:<12} {row['bound']:<7} "
            f"{row['sol_us']:>8.2f}")
    if "median_us" not in ours:
        why = row.get("error") or ours.get("error") or "not timed"
        return f"{head} {why}"
    spread = f"{ours['median_us']:.1f} ({ours['p10_us']:.1f}-{ours['p90_us']:.1f})"
    best = row.get("best_baseline", "-")
    best_us = row["impls"][best]["median_us"] if best in row["impls"] else float("nan")
    ratio = f"{row.get('ratio_vs_best', float('nan')):.2f}x"
    if "ratio_p10" in row:
        ratio += f" ({row['ratio_p10']:.2f}-{row['ratio_p90']:.2f})"
    copy = f"{ours['pct_of_copy']:.1f}%" if "pct_of_copy" in ours else "-"
    return (f"{head} {spread:>22} {ours['tflops']:>8.1f} {ours['tbps']:>6.2f} "
            f"{ours['pct_roofline']:>5.1f}% {copy:>6}  {best:<22} {best_us:>9.1f} {ratio:>18}  "
            f"{row.get('check', '-')}")


def _roofs(rows):
    return sorted({(r["peak_flops"], r["bandwidth"]) for r in rows})


def write_plot(rows: list[dict], path: Path, title: str) -> Path:
    """Roofline plot: achieved TFLOP/s against arithmetic intensity, log-log, with the roofs of
    the profile. PNG through matplotlib when it is importable, else a hand-written SVG."""
    points = [(r["intensity"], r["impls"]["tileops"]["tflops"], f"{r['op']}:{r['workload']}")
              for r in rows if "tflops" in r["impls"].get("tileops", {}) and r["intensity"] > 0]
    best = [(r["intensity"], r["impls"][r["best_baseline"]]["tflops"])
            for r in rows if r.get("best_baseline") and r["intensity"] > 0]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return _write_svg(points, best, _roofs(rows), path.with_suffix(".svg"), title)
    fig, ax = plt.subplots(figsize=(10, 7))
    xs = [10 ** (e / 10) for e in range(-20, 45)]
    for peak, bw in _roofs(rows):
        ax.plot(xs, [min(peak, bw * x) / 1e12 for x in xs], "k-", lw=1, alpha=0.5)
        ax.annotate(f"{peak / 1e12:.0f} TFLOP/s, {bw / 1e12:.2f} TB/s", (xs[-1], peak / 1e12),
                    ha="right", va="bottom", fontsize=7)
    if best:
        ax.scatter([b[0] for b in best], [b[1] for b in best], marker="x", c="gray",
                   label="strongest baseline")
    ax.scatter([p[0] for p in points], [p[1] for p in points], c="tab:red", label="TileOPs")
    for x, y, name in points:
        ax.annotate(name, (x, y), fontsize=5, alpha=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte, spec roofline)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(title)
    ax.legend()
    out = path.with_suffix(".png")
    fig.savefig(out, dpi=130, bbox_inches="tight")
    plt.close(fig)
    return out


def _write_svg(points, best, roofs, path: Path, title: str) -> Path:
    w, h, m = 900, 620, 60
    lx0, lx1, ly0, ly1 = -2.0, 4.5, -3.0, 3.5  # log10 ranges: intensity, TFLOP/s

    def xy(x, y):
        lx = (math.log10(max(x, 1e-9)) - lx0) / (lx1 - lx0)
        ly = (math.log10(max(y, 1e-9)) - ly0) / (ly1 - ly0)
        return m + lx * (w - 2 * m), h - m - ly * (h - 2 * m)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
             f'font-family="sans-serif" font-size="10">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<text x="{w / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
             f'<text x="{w / 2}" y="{h - 15}" text-anchor="middle">arithmetic intensity '
             f'(FLOP/byte, log)</text>',
             f'<text x="15" y="{h / 2}" transform="rotate(-90 15 {h / 2})" '
             f'text-anchor="middle">TFLOP/s (log)</text>']
    for peak, bw in roofs:
        pts = [xy(10 ** (lx0 + i * (lx1 - lx0) / 100), min(peak, bw * 10 ** (lx0 + i * (lx1 - lx0) / 100)) / 1e12)
               for i in range(101)]
        parts.append('<polyline fill="none" stroke="black" stroke-width="1" points="' +
                     " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
    for x, y in best:
        px, py = xy(x, y)
        parts.append(f'<text x="{px:.1f}" y="{py:.1f}" fill="gray" text-anchor="middle">x</text>')
    for x, y, name in points:
        px, py = xy(x, y)
        parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="red"/>')
        parts.append(f'<text x="{px + 4:.1f}" y="{py - 4:.1f}" font-size="6">{name}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts))
    return path


def run(args) -> int:
    ops = [o.name for o in manifest.load().ops if o.status == "implemented"]
    if args.op:
        wanted = [w.strip() for w in args.op.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in ops]
        if unknown or not wanted:
            print(f"tileops bench: no implemented op named {', '.join(map(repr, unknown)) or repr(args.op)} "
                  f"(implemented: {', '.join(ops)})", file=sys.stderr)
            return 1
        ops = wanted
    if (args.label or args.dtype) and not any(
            selected_workloads(manifest.op(name), args.dtype, args.label) for name in ops):
        print(f"tileops bench: no workload row of {', '.join(ops)} matches"
              f"{f' --label {args.label!r}' if args.label else ''}"
              f"{f' --dtype {args.dtype!r}' if args.dtype else ''}", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("tileops bench: no CUDA GPU here; nothing to time", file=sys.stderr)
        return 2
    if not _kernels.available():
        print("tileops bench: the CUDA kernels are not built in this installation "
              "(_tskernels missing: reinstall where nvcc is present)", file=sys.stderr)
        return 2
    runs = max(args.runs, 50)
    timer = _Timer(runs)
    device = torch.cuda.get_device_name()
    copy_tbps = copy_bandwidth(timer)
    print(f"tileops bench on {device}; roofline profile {args.profile}; "
          f"{'tuned configs' if getattr(args, 'tune', False) else 'default configs'}; "
          f"{METHOD.format(runs=runs)}; %copy: of a 2 GiB device copy, {copy_tbps:.2f} TB/s "
          "in this run")
    print(HEADER)
    rows = []
    for name in ops:
        rows += bench_op(name, timer, args.profile, not args.no_compile, args.dtype, args.label,
                         args.quick, lambda s: print(s, flush=True), getattr(args, "tune", False),
                         copy_tbps=copy_tbps)
    report = {"device": device, "torch": torch.__version__, "profile": args.profile,
              "copy_tbps": copy_tbps,
              "tuned": bool(getattr(args, "tune", False)),
              "method": METHOD.format(runs=runs), "rows": rows}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
        print(f"tileops bench: JSON in {args.json}")
    if args.plot:
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        out = write_plot(rows, Path(args.plot), f"TileOPs on {device} ({args.profile} roofline)")
        print(f"tileops bench: roofline plot in {out}")
    failed = [r for r in rows if r.get("error") or r.get("check") == "MISMATCH"]
    return 1 if failed else 0
