"""Where the decode rows lose to torch.compile (0.81-0.97x on the H200 at 4-6 us under the old
normal-priority flush, which left Inductor's evict_last lines in the L2): each op and its torch.compile'd twin on the decode shapes, a few launches
each, meant to run under Nsight Compute so the kernels' own durations, instruction counts and
DRAM bytes can be set side by side:

    ncu --clock-control none --csv --metrics gpu__time_duration.sum,smsp__inst_executed.sum,\
dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,\
launch__registers_per_thread python3 dev/decode_probe.py --runs 2 > decode_probe.csv

It also prints the medians of the same calls timed as tileops bench times them
(tileops.timing.time_runs: the L2 flushed before each, CUDA events). With --trace it also times the same flushed
loop under torch.profiler (CUPTI: real clocks, the flush queued right before each call) and
prints, per kernel, the median gap from the end of the GPU work before it to its start and its
median duration: whether the event-timed gap to torch.compile is spent before the kernel starts
or inside it. Diagnostic only (not a test)."""

import statistics
import sys
from collections import defaultdict

import torch

from tileops import manifest, ops, testing
from tileops.timing import flush_buffer, summary, time_runs

# (op, input shapes, params): the decode rows of specs/norm.yaml and specs/activation.yaml
ROWS = [
    ("RMSNormFwdOp", [(16, 4096), (4096,)], {"eps": 1e-6}),
    ("RMSNormFwdOp", [(16, 8192), (8192,)], {"eps": 1e-6}),
    ("LayerNormFwdOp", [(16, 4096), (4096,), (4096,)], {"eps": 1e-5}),
    ("SiluAndMulFwdOp", [(16, 2 * 14336)], {}),
]


def cases():
    """(label, (tileops call, its twin), (torch.compile call, its twin)): the compiled side is
    what tileops bench compiles, the spec's reference. A twin is the same call on other
    tensors of the same shapes: run between the flush and the start event, it leaves the
    kernel's code and launch state warm while the timed call's data stays cold."""
    for name, shapes, params in ROWS:
        tensors = [torch.randn(s, device="cuda", dtype=torch.bfloat16) for s in shapes]
        twins = [torch.randn_like(t) for t in tensors]
        op = ops.get(name)(**params)
        spec = manifest.op(name)
        torch._dynamo.reset()  # each row compiles the same function afresh, as tileops bench
        compiled = torch.compile(testing.reference_function(spec), dynamic=False)
        label = f"{name} {'x'.join(map(str, shapes[0]))}"
        yield label, ((lambda op=op, t=tensors: op(*t)), (lambda op=op, t=twins: op(*t))), (
            (lambda c=compiled, t=tensors, p=params, s=spec: c(**testing.reference_kwargs(s, t, p))),
            (lambda c=compiled, t=twins, p=params, s=spec: c(**testing.reference_kwargs(s, t, p))))


def graphed(fn):
    """`fn` captured once in a CUDA graph (after warm-up on a side stream); returns its replay.
    Timed like the direct call, a replay submits the same kernel through the graph path, so a gap
    that stays under replay is not in how the host submits the launch."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def timeline_gaps(prof) -> dict:
    """kernel name -> (median ns from the end of the GPU work before it to its start, median
    duration in ns, count), from a torch.profiler run with CUDA activity."""
    events = sorted((e.start_ns(), e.duration_ns(), e.name())
                    for e in prof.profiler.kineto_results.events()
                    if e.device_type() == torch.autograd.DeviceType.CUDA)
    gaps, durations = defaultdict(list), defaultdict(list)
    for (s0, d0, _), (s1, d1, n1) in zip(events, events[1:]):
        gaps[n1].append(s1 - (s0 + d0))
        durations[n1].append(d1)
    return {n: (statistics.median(gaps[n]), statistics.median(durations[n]), len(gaps[n]))
            for n in gaps}


def traced(call, runs: int, flush) -> dict:
    """time_runs(call) under torch.profiler: the same flushed, event-timed loop, seen by CUPTI."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        time_runs(call, runs, flush)
    return timeline_gaps(prof)


def main() -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=200, help="timed calls per side (2 under ncu)")
    p.add_argument("--settle", action="store_true",
                   help="also time each call after a one-element fill between the flush and the "
                        "start event: if the gap to torch.compile closes, it comes from the state "
                        "the flush's reduction leaves on the SMs, not from the kernel; and after "
                        "the same call on twin tensors ('+code'): if it closes there, the cold "
                        "kernel code after the flush is the cause")
    p.add_argument("--graph", action="store_true",
                   help="also time each call captured in a CUDA graph and replayed ('graph')")
    p.add_argument("--plain-flush", action="store_true",
                   help="also time each call after the L2 flush of earlier runs, a normal-priority "
                        "read ('plain'), which leaves lines loaded at evict_last in the L2")
    p.add_argument("--trace", action="store_true",
                   help="also print each side's kernel timeline under torch.profiler: gap before "
                        "each kernel and its duration (medians)")
    args = p.parse_args()
    runs_per_row = max(args.runs, 2)
    cold = flush_buffer()  # read by timing.flush_l2 at evict_last priority, as tileops bench does
    one = torch.zeros(1, device="cuda")

    def fill():
        one.fill_(1.0)

    for name, ours, compiled in cases():
        for label, (fn, twin) in (("tileops", ours), ("torch.compile", compiled)):
            runs = [("", fn, None, cold)]
            if args.settle:
                twin()  # any compile for the twins happens here, not inside the timed loop
                runs += [(" +fill", fn, fill, cold), (" +code", fn, twin, cold)]
            if args.graph:
                runs += [(" graph", graphed(fn), None, cold)]
            if args.plain_flush:
                runs += [(" plain", fn, None, lambda: cold.sum())]
            for suffix, call, settle, flush in runs:
                stats = summary(time_runs(call, runs_per_row, flush, settle=settle))
                print(f"{name:<30} {label + suffix:<20} {stats['median_us']:6.2f} us "
                      f"({stats['p10_us']:.2f}-{stats['p90_us']:.2f})", flush=True)
            if args.trace:
                for kernel, (gap, dur, n) in sorted(traced(fn, runs_per_row, cold).items(),
                                                    key=lambda kv: -kv[1][2]):
                    print(f"    trace {label:<14} gap {gap:6.0f} ns  dur {dur:6.0f} ns  n {n:4d}  "
                          f"{kernel[:70]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
