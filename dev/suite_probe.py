"""Where a suite problem's time goes: Inductor's generated wrapper (saved), per-kernel device time
under torch.profiler for eager and Inductor default side by side, the wrapper's call() alone on
its own benchmark arguments, and the host functions a compiled step spends its time in
(cProfile). A diagnostic for problems where Tilesmith finds nothing (e.g. eager beating
Inductor); not part of any test.

    python dev/suite_probe.py OUT_DIR NAME [NAME ...]     # names of bench/suite/*.py
"""

import cProfile
import io
import pstats
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from tilesmith.bench import _Problem

SUITE = Path(__file__).resolve().parents[1] / "bench" / "suite"


def kernel_table(step, runs: int = 20) -> list[tuple[str, float, int]]:
    """(kernel name, mean device us per step, launches per step), slowest first."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            step()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        if e.device_time_total > 0 and e.count >= runs:
            rows.append((e.key, e.device_time_total / runs, e.count // runs))
    return sorted(rows, key=lambda r: -r[1])


def step_time_us(step, runs: int = 200) -> float:
    for _ in range(5):
        step()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    begin.record()
    for _ in range(runs):
        step()
    end.record()
    torch.cuda.synchronize()
    return begin.elapsed_time(end) * 1000 / runs


def load_graph_runtime():
    """The CUDA graph runtime the search agent pastes into candidates, as a class."""
    source = SUITE.parents[1] / "core" / "agent" / "search" / "cuda_graph_runtime.py"
    scope = {"torch": torch}
    exec(compile(source.read_text(), str(source), "exec"), scope)
    return scope["_TsGraphedCall"]


def direct_launch_helper() -> dict:
    """The helper the search agent pastes into a direct-launch candidate, as a namespace."""
    source = SUITE.parents[1] / "core" / "agent" / "search" / "direct_launch.py"
    scope = {"torch": torch}
    exec(compile(source.read_text(), str(source), "exec"), scope)
    return scope


def direct_launch_us(mod, args) -> str:
    """call() with each Triton kernel's run() replaced by its one launcher (what the search
    agent's direct_launch candidate calls once settled), timed back to back."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    kernels = [v for v in vars(mod).values() if isinstance(v, CachingAutotuner)]
    launchers = direct_launch_helper()["_ts_direct_launchers"](kernels)
    if not kernels or launchers is None:
        return f"not bound ({len(kernels)} kernel(s))"
    for k, launcher in zip(kernels, launchers):
        k.run = launcher  # the instance attribute wins over CachingAutotuner.run
    try:
        return f"{step_time_us(lambda: mod.call(list(args))):.1f} us back to back"
    finally:
        for k in kernels:
            del k.run


def profile_lines(step, title: str, calls: int = 300) -> list[str]:
    """The host functions `calls` steps spend their time in (cProfile, by own time)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        step()
    torch.cuda.synchronize()
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(18)
    return [f"{title} by function (tottime):"] + [
        f"  {line}" for line in text.getvalue().splitlines() if line.strip()][-22:]


def probe(name: str, out_dir: Path) -> None:
    problem = _Problem(SUITE / f"{name}.py", seed=0, device="cuda")
    torch._dynamo.reset()
    compiled = torch.compile(problem.fresh_model())
    from torch._inductor.codecache import PyCodeCache

    def module_files():
        return {m.__file__ for m in PyCodeCache.modules if getattr(m, "__file__", None)}

    before = module_files()
    eager_step, _ = problem.step_fn(problem.fresh_model(), problem.fresh_model())
    inductor_step, _ = problem.step_fn(compiled, compiled)
    inductor_step()
    # The modules this compile wrote (the wrapper and its kernels), in path order.
    new = module_files() - before
    modules = sorted((m for m in PyCodeCache.modules if getattr(m, "__file__", None) in new),
                     key=lambda m: m.__file__)
    codes = [Path(m.__file__).read_text() for m in modules]
    (out_dir / f"{name}.wrappers.py").write_text("\n\n# ======== next module ========\n\n".join(codes))
    lines = [f"# {name}"]
    for label, step in (("eager", eager_step), ("inductor", inductor_step)):
        lines.append(f"{label}: {step_time_us(step):.1f} us per step back to back")
        for kernel, us, n in kernel_table(step):
            lines.append(f"  {us:9.2f} us  x{n}  {kernel[:150]}")
    # Each wrapper's call() alone (what a Tilesmith rewrite can change), on the module's own
    # benchmark arguments; call() empties the list it is given, so each call gets a fresh one.
    for mod in modules:
        if hasattr(mod, "call") and hasattr(mod, "get_args"):
            args = mod.get_args()
            lines.append(f"call() of {Path(mod.__file__).name}: "
                         f"{step_time_us(lambda: mod.call(list(args))):.1f} us back to back")
            lines.append(f"  with direct launches: {direct_launch_us(mod, args)}")
            # The same call() through the search agent's CUDA graph runtime (what its cuda_graph
            # candidate runs), with `y = f(x)` ownership: the last output alive during the call.
            graphed, last = load_graph_runtime()(), [None]

            def graphed_call():
                last[0] = graphed(mod.call, list(args))

            lines.append(f"  through the CUDA graph runtime: {step_time_us(graphed_call):.1f} us "
                         f"back to back ({graphed.captures} graph(s), {graphed.handout_captures} "
                         f"handout capture(s), original ran: {graphed.eager_calls}, "
                         f"disabled: {graphed.disabled})")
            lines += profile_lines(graphed_call, "  host time of 300 graphed calls")
    lines += profile_lines(inductor_step, "host time of 300 inductor steps")
    report = "\n".join(lines)
    print(report, flush=True)
    (out_dir / f"{name}.kernels.txt").write_text(report + "\n")


def main() -> int:
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[2:]:
        try:
            probe(name, out_dir)
        except Exception as e:  # one problem's failure does not stop the others
            print(f"# {name}: {type(e).__name__}: {e}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
