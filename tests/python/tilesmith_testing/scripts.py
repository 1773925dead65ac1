"""Scripted model conversations for the mock OpenAI server (test-only).

The candidates are unified diffs anchored on `call = runner.call`, a line every Inductor 2.11
wrapper has (graph partitioning is on by default), so a script can be written before the wrapper
exists. The patcher finds a hunk at any offset.
"""

import json

ANCHOR = "call = runner.call"

# Doubles every output: a candidate the gate must reject as incorrect.
BROKEN_DIFF = (
    "@@ -1,1 +1,3 @@\n"
    f" {ANCHOR}\n"
    "+_ts_broken = call\n"
    "+call = lambda args: tuple(o * 2 for o in _ts_broken(args))\n"
)

# An equivalent candidate that counts its own calls, so a test can see that it is what runs.
COUNTED_LINES = [
    "_ts_calls = [0]",
    "_ts_inner = call",
    "def _ts_counted(args):",
    "    _ts_calls[0] += 1",
    "    return _ts_inner(args)",
    "call = _ts_counted",
]
COUNTED_DIFF = (f"@@ -1,1 +1,{1 + len(COUNTED_LINES)} @@\n {ANCHOR}\n"
                + "".join(f"+{l}\n" for l in COUNTED_LINES))
# The same candidate reached from BROKEN_DIFF's text (a diff applies to the current candidate).
FIX_BROKEN_DIFF = (f"@@ -1,3 +1,{1 + len(COUNTED_LINES)} @@\n {ANCHOR}\n"
                   "-_ts_broken = call\n"
                   "-call = lambda args: tuple(o * 2 for o in _ts_broken(args))\n"
                   + "".join(f"+{l}\n" for l in COUNTED_LINES))


def _call(i, name, args):
    return {"id": f"c{i}", "name": name, "arguments": json.dumps(args)}


def reject_then_accept() -> list:
    """Three model calls: read, a wrong candidate (rejected), a correct one (accepted)."""
    return [
        {"kind": "completion", "tool_calls": [_call(1, "read_attempt", {})]},
        {"kind": "completion", "tool_calls": [_call(2, "write_candidate", {"diff": BROKEN_DIFF}),
                                              _call(3, "evaluate", {})]},
        {"kind": "completion", "tool_calls": [_call(4, "write_candidate",
                                                    {"diff": FIX_BROKEN_DIFF}),
                                              _call(5, "evaluate", {})]},
    ]


def accept_each(graphs: int) -> list:
    """One model call per graph: write the counted candidate and evaluate it."""
    return [{"kind": "completion", "tool_calls": [_call(2 * i, "write_candidate",
                                                        {"diff": COUNTED_DIFF}),
                                                  _call(2 * i + 1, "evaluate", {})]}
            for i in range(graphs)]


# A genuinely faster candidate for launch-bound CUDA graphs: call() copies the arguments into
# static buffers, replays a CUDA graph of Inductor's own launches, and returns fresh copies of the
# outputs (one copy per output storage, so outputs that share a buffer still do). Outputs that are
# arguments, or views of arguments, come back as those very arguments (or the same views of them),
# which AOTAutograd's saved-tensor aliasing needs. Any unusual layout falls back to the original.
# _ts_make_graph and _ts_device_ok are module globals so a CPU test can emulate the graph.
CUDA_GRAPH_LINES = '''\
_ts_inductor_call = call
_ts_graphs = {}


def _ts_device_ok(a):
    return a.is_cuda


def _ts_make_graph(fn, static_args):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # Triton autotunes at its first launch: never inside the capture
            fn(list(static_args))
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, capture_error_mode="thread_local"):  # other threads may use CUDA
        static_out = fn(list(static_args))
    return graph.replay, static_out


def _ts_layout(args):
    return tuple((tuple(a.shape), a.stride(), a.dtype, str(a.device))
                 if isinstance(a, torch.Tensor) else type(a) for a in args)


def _ts_build(args):
    if not all(isinstance(a, torch.Tensor) and _ts_device_ok(a) for a in args):
        return None
    static_args = [torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
                   for a in args]
    for s, a in zip(static_args, args):
        s.copy_(a)
    replay, static_out = _ts_make_graph(_ts_inductor_call, static_args)
    arg_of = {s.untyped_storage().data_ptr(): i for i, s in enumerate(static_args)}
    plan, groups, group_of = [], [], {}
    for o in static_out:
        if not isinstance(o, torch.Tensor):
            return None
        ptr = o.untyped_storage().data_ptr()
        if ptr in arg_of:
            i = arg_of[ptr]
            if o is static_args[i]:
                plan.append((0, i, None))
            elif o.dtype == static_args[i].dtype:
                delta = o.storage_offset() - static_args[i].storage_offset()
                plan.append((1, i, (tuple(o.size()), o.stride(), delta)))
            else:
                return None
            continue
        if ptr not in group_of:
            st = o.untyped_storage()
            group_of[ptr] = len(groups)
            groups.append(torch.empty(0, dtype=torch.uint8, device=o.device)
                          .set_(st, 0, (st.nbytes(),), (1,)))
        if groups[group_of[ptr]].numel() % o.element_size():
            return None
        plan.append((2, group_of[ptr], (o.dtype, tuple(o.size()), o.stride(),
                                        o.storage_offset())))
    return static_args, replay, groups, plan, static_out


def _ts_graph_call(args):
    real = list(args)
    args.clear()
    key = _ts_layout(real)
    entry = _ts_graphs.get(key, False)
    if entry is False:
        entry = _ts_graphs[key] = _ts_build(real)
    if entry is None:
        return _ts_inductor_call(real)
    static_args, replay, groups, plan, _ = entry
    torch._foreach_copy_(static_args, real)  # one multi-tensor launch for all inputs
    replay()
    fresh = [g.clone() for g in groups]
    outs = []
    for kind, i, meta in plan:
        if kind == 0:
            outs.append(real[i])
        elif kind == 1:
            size, stride, delta = meta
            outs.append(real[i].as_strided(size, stride, real[i].storage_offset() + delta))
        else:
            dtype, size, stride, offset = meta
            outs.append(fresh[i].view(dtype).as_strided(size, stride, offset))
    return tuple(outs)


call = _ts_graph_call
'''.splitlines()

CUDA_GRAPH_DIFF = (f"@@ -1,1 +1,{1 + len(CUDA_GRAPH_LINES)} @@\n {ANCHOR}\n"
                   + "".join(f"+{l}\n" for l in CUDA_GRAPH_LINES))


def cuda_graph_each(graphs: int) -> list:
    """One model call per graph: write the CUDA-graph candidate and evaluate it."""
    return [{"kind": "completion", "tool_calls": [_call(2 * i, "write_candidate",
                                                        {"diff": CUDA_GRAPH_DIFF}),
                                                  _call(2 * i + 1, "evaluate", {})]}
            for i in range(graphs)]
