"""The CUDA graph runtime the search agent pastes into candidates, exercised on the CPU.

A stand-in graph keeps the memory semantics of a real one: capture records the launch sequence
with the buffers it used, and replay runs it again writing into the very same output and input
buffers, so stale outputs, missed copies and broken aliasing all show up as wrong values.
"""

import contextlib
import pathlib
from unittest import mock

import pytest
import torch

RUNTIME = pathlib.Path(__file__).resolve().parents[2] / "core/agent/search/cuda_graph_runtime.py"


def load_runtime():
    scope = {"torch": torch}
    exec(compile(RUNTIME.read_text(), str(RUNTIME), "exec"), scope)
    return scope["_TsGraphedCall"]


class FakeGraph:
    """Replays the recorded call into the buffers of the capture (what a CUDA graph does)."""

    capturing = None

    def __init__(self):
        self.recorded = None

    def capture_begin(self, pool=None, capture_error_mode=None):
        FakeGraph.capturing = self

    def pool(self):
        return ("pool", id(self))

    def capture_end(self):
        FakeGraph.capturing = None

    def replay(self):
        compute, args, outs = self.recorded
        fresh = compute(list(args))
        inputs = {a.untyped_storage().data_ptr() for a in args if isinstance(a, torch.Tensor)}
        for o, f in zip(outs, fresh):
            if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() not in inputs:
                o.copy_(f)


class FakeStream:
    def __init__(self, device=None):
        pass

    def wait_stream(self, other):
        pass


@contextlib.contextmanager
def cpu_cuda_api():
    with mock.patch.object(torch.cuda, "is_current_stream_capturing", lambda: False), \
            mock.patch.object(torch.cuda, "device", lambda d: contextlib.nullcontext()), \
            mock.patch.object(torch.cuda, "current_stream", lambda d=None: FakeStream()), \
            mock.patch.object(torch.cuda, "stream", lambda s: contextlib.nullcontext()):
        yield


def eager_of(compute):
    """The wrapper's original call(args): clears its list like Inductor's does."""

    def eager(args):
        saved = list(args)
        args.clear()
        outs = compute(list(saved))
        if FakeGraph.capturing is not None:
            FakeGraph.capturing.recorded = (compute, saved, outs)
            # Inside a capture nothing runs: hand back garbage in the output buffers.
            inputs = {a.untyped_storage().data_ptr() for a in saved if isinstance(a, torch.Tensor)}
            for o in outs:
                if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() not in inputs:
                    o.fill_(float("nan") if o.is_floating_point() else -1)
        return outs

    return eager


def make(written=(), clear_workspaces=lambda: None):
    cls = load_runtime()
    return cls(written_inputs=written, graph_factory=FakeGraph, stream_factory=FakeStream,
               device_type="cpu", clear_workspaces=clear_workspaces)


# A training-forward-like graph: a matmul with a parameter, a returned input, a view of an input,
# two outputs sharing one buffer, a scalar and a None.
def forward_like(args):
    w, x, scale = args
    h = torch.empty_strided((x.shape[0], w.shape[1]), (w.shape[1], 1), dtype=x.dtype,
                            device=x.device)
    torch.mm(x, w, out=h)
    h.mul_(scale)
    buf = torch.empty(2 * h.numel(), dtype=h.dtype, device=h.device)
    buf[: h.numel()].copy_(h.flatten())
    buf[h.numel():].copy_(h.flatten().relu())
    a = torch._C._dynamo.guards._reinterpret_tensor(buf, h.shape, h.stride(), 0)
    b = torch._C._dynamo.guards._reinterpret_tensor(buf, h.shape, h.stride(), h.numel())
    view = torch._C._dynamo.guards._reinterpret_tensor(x, (x.numel(),), (1,), 0)
    return (a, b, w, view, None, a)


def run_reference(args):
    return forward_like(list(args))


def test_outputs_match_the_original_and_are_fresh_every_call():
    runtime = make()
    w = torch.randn(16, 8)
    results, expected = [], []
    with cpu_cuda_api():
        for step in range(6):
            x = torch.randn(4, 16)  # a new activation each call: copied in
            args = [w, x, 2.0]
            expected.append([t.clone() if isinstance(t, torch.Tensor) else t
                             for t in run_reference(args)])
            out = runtime(eager_of(forward_like), list(args))
            results.append((out, x))
    assert runtime.captures == 1 and runtime.replays == 5 and runtime.disabled is None
    for (out, x), exp in zip(results, expected):  # earlier outputs were not overwritten later
        a, b, w_out, view, none, a_again = out
        assert a_again is a  # the same tensor returned twice stays one object
        torch.testing.assert_close(a, exp[0], rtol=0, atol=0)
        torch.testing.assert_close(b, exp[1], rtol=0, atol=0)
        assert w_out is w  # a returned input is the very input object
        assert view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        torch.testing.assert_close(view, x.flatten(), rtol=0, atol=0)
        assert none is None
        # the two outputs still share one storage, at the same offsets
        assert a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
        assert (a.storage_offset(), b.storage_offset()) == (0, a.numel())
        assert a.stride() == exp[0].stride()
    # outputs of different calls own different memory
    assert results[-1][0][0].data_ptr() != results[-2][0][0].data_ptr()


def test_a_loop_keeping_only_the_last_output_alternates_two_handouts_without_copies():
    # `y = f(x)` in a loop: the previous y is alive during the call, then dropped.
    runtime = make()
    w = torch.randn(16, 8)
    xs = [torch.randn(4, 16) for _ in range(8)]  # all alive: never at a repeated address
    ptrs, y = [], None
    with cpu_cuda_api():
        for step, x in enumerate(xs):
            exp = run_reference([w, x, 2.0])
            y = runtime(eager_of(forward_like), [w, x, 2.0])
            torch.testing.assert_close(y[0], exp[0], rtol=0, atol=0)
            torch.testing.assert_close(y[1], exp[1], rtol=0, atol=0)
            assert y[5] is y[0] and y[0].untyped_storage().data_ptr() == y[1].untyped_storage().data_ptr()
            ptrs.append(y[0].untyped_storage().data_ptr())
            if step >= 1:  # a handout's own storage, not a copy
                handed = {flat.untyped_storage().data_ptr()
                          for h in runtime.state["handouts"] for flat, _, _ in h["pools"]}
                assert ptrs[-1] in handed
    assert runtime.captures == 1 and runtime.handout_captures == 2
    assert len(set(ptrs[1:])) == 2  # the two handouts, in turn
    assert all(a != b for a, b in zip(ptrs[1:], ptrs[2:]))


def test_held_outputs_and_views_of_them_are_never_overwritten():
    runtime = make()
    w = torch.randn(16, 8)
    kept = []  # a view of one output per call, and what it must keep holding
    with cpu_cuda_api():
        for x in [torch.randn(4, 16) for _ in range(7)]:
            out = runtime(eager_of(forward_like), [w, x, 2.0])
            row = out[1][1:]  # only a view survives the call
            kept.append((row, row.clone()))
            del out
    for row, value in kept:
        torch.testing.assert_close(row, value, rtol=0, atol=0)
    assert runtime.handout_captures == 2  # both held for good: later calls copy out
    assert len({row.untyped_storage().data_ptr() for row, _ in kept}) == len(kept)


def test_parameter_read_in_place_sees_updates_and_a_moved_parameter_falls_back():
    runtime = make()
    w = torch.randn(16, 8)
    x = torch.randn(4, 16)
    with cpu_cuda_api():
        for _ in range(3):
            runtime(eager_of(forward_like), [w, x, 1.0])
        w.add_(1.0)  # an optimizer step: same address, new values
        out = runtime(eager_of(forward_like), [w, x, 1.0])
        torch.testing.assert_close(out[0], x @ w)
        inplace = dict(runtime.state["inplace"])
        assert inplace.get(0) == w.data_ptr()
        w2 = torch.randn(16, 8)  # a new parameter tensor elsewhere
        out = runtime(eager_of(forward_like), [w2, x, 1.0])
        torch.testing.assert_close(out[0], x @ w2)
        assert runtime.captures == 2


def test_written_input_is_copied_back_like_the_original_mutation():
    # A backward-like graph reusing a donated saved tensor as its output buffer.
    def backward_like(args):
        saved, grad = args
        buf = saved  # buf1 = mm; del mm  # reuse
        buf.mul_(grad)
        out = torch.empty_like(buf)
        torch.add(buf, 1.0, out=out)
        return (out, None)

    runtime = make(written=(0,))
    grad = torch.randn(8, 8)
    with cpu_cuda_api():
        for _ in range(4):
            saved = torch.randn(8, 8)
            reference_saved = saved.clone()
            reference_out = reference_saved * grad + 1.0
            out = runtime(eager_of(backward_like), [saved, grad])
            torch.testing.assert_close(out[0], reference_out)
            torch.testing.assert_close(saved, reference_saved * grad)  # same effect on the input
    assert runtime.captures == 1
    assert 0 in runtime.state["copied"]


def test_scalar_change_and_failed_capture_run_the_original():
    runtime = make()
    w, x = torch.randn(16, 8), torch.randn(4, 16)
    with cpu_cuda_api():
        runtime(eager_of(forward_like), [w, x, 1.0])
        runtime(eager_of(forward_like), [w, x, 1.0])
        out = runtime(eager_of(forward_like), [w, x, 3.0])  # another scalar: not the graph
        torch.testing.assert_close(out[0], (x @ w) * 3.0)
    assert runtime.eager_calls == {"warm-up": 1, "another signature": 1}

    def broken(args):
        if FakeGraph.capturing is not None:
            raise RuntimeError("operation not permitted when stream is capturing")
        return forward_like(args)

    runtime = make()
    with cpu_cuda_api():
        for _ in range(3):
            out = runtime(eager_of(broken), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
    assert runtime.disabled is not None and "capture failed" in runtime.disabled
    assert FakeGraph.capturing is None
    assert runtime.eager_calls == {"warm-up": 1, "disabled": 2}


def test_settled_addresses_replay_directly_and_never_an_evicted_graph():
    runtime = make()
    runtime.MAX_GRAPHS = 2
    sets = [(torch.randn(16, 8), torch.randn(4, 16)) for _ in range(3)]
    with cpu_cuda_api():
        for i in range(60):
            w, x = sets[(i // 10) % 3]  # dwell on each set long enough to settle there
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
            assert all(any(g is h for h in runtime.graphs) for g in runtime.settled.values())
    assert runtime.captures > runtime.MAX_GRAPHS  # graphs were evicted on the way
    assert runtime.settled  # the dwelling calls went through the direct path
    assert runtime.replays == 60 - sum(runtime.eager_calls.values())


def test_inputs_on_another_device_type_are_never_captured():
    runtime = make()
    runtime.device_type = "cuda"  # the real setting: CPU tensors do not qualify
    w, x = torch.randn(16, 8), torch.randn(4, 16)
    with cpu_cuda_api():
        for _ in range(3):
            out = runtime(eager_of(forward_like), [w, x, 1.0])
    torch.testing.assert_close(out[0], x @ w)
    assert runtime.captures == 0 and runtime.disabled


@pytest.mark.gpu
def test_real_cuda_graph_replay_matches_eager():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA")
    cls = load_runtime()
    runtime = cls()
    w = torch.randn(64, 32, device="cuda")
    held = []  # every third call's output is kept: the handouts it lives in are not replayed
    xs = [torch.randn(8, 64, device="cuda") for _ in range(9)]  # distinct addresses: copied in
    for step, x in enumerate(xs):
        out = runtime(eager_of(forward_like), [w, x, 2.0])
        torch.testing.assert_close(out[0], (x @ w) * 2.0)
        if step % 3 == 0:
            held.append((out[1], out[1].clone()))
    torch.cuda.synchronize()
    for value, expected in held:
        torch.testing.assert_close(value, expected, rtol=0, atol=0)
    assert runtime.captures == 1 and runtime.handout_captures == 2 and runtime.disabled is None


def test_inputs_copied_at_first_are_read_in_place_once_their_address_settles():
    # The gate's correctness trials pass fresh tensors each time; its timing then reuses them.
    runtime = make()
    trials = []  # kept alive, so no trial's tensors land at an address an earlier one had
    with cpu_cuda_api():
        for _ in range(3):  # warm-up, capture (everything copied), one replay
            w, x = torch.randn(16, 8), torch.randn(4, 16)
            trials.append((w, x))
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
        assert runtime.captures == 1 and runtime.state["inplace"] == ()
        w = torch.randn(16, 8)
        # The weights settle at one address, the activation keeps moving; the weights count as
        # stable once the scattered addresses of the trials leave their last 8 calls.
        for _ in range(8):
            x = torch.randn(4, 16)
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
        assert runtime.captures == 2
        assert [i for i, _ in runtime.state["inplace"]] == [0]
        w.mul_(-1.0)  # updates in place are seen by the graph
        x = torch.randn(4, 16)
        out = runtime(eager_of(forward_like), [w, x, 1.0])
        torch.testing.assert_close(out[0], x @ w)


def test_moved_parameters_lead_to_a_new_capture():
    runtime = make()
    x = torch.randn(4, 16)
    with cpu_cuda_api():
        w = torch.randn(16, 8)
        for _ in range(3):
            runtime(eager_of(forward_like), [w, x, 1.0])
        w = torch.randn(16, 8)  # e.g. the model was reloaded
        for _ in range(runtime.CAPTURE_GAP):
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
        # at once a graph reading x in place and copying the new w (no graph fitted); reading
        # both waits CAPTURE_GAP calls from that capture
        assert runtime.captures == 2
        assert [i for i, _ in runtime.state["inplace"]] == [1]
        out = runtime(eager_of(forward_like), [w, x, 1.0])
        torch.testing.assert_close(out[0], x @ w)
        assert runtime.captures == 3
        assert sorted(i for i, _ in runtime.state["inplace"]) == [0, 1]


def test_the_gates_call_pattern_is_correct_and_ends_in_place():
    # Correctness trials: fresh buffers per input class, each class run twice; then timing over
    # 3 buffer sets per side, refilled with one of 4 value sets before every call.
    runtime = make()
    checks = 0
    with cpu_cuda_api():
        for _ in range(5):
            w, x = torch.randn(16, 8), torch.randn(4, 16)
            for _ in range(2):
                out = runtime(eager_of(forward_like), [w, x, 1.0])
                torch.testing.assert_close(out[0], x @ w)
                checks += 1
        bufsets = [(torch.empty(16, 8), torch.empty(4, 16)) for _ in range(3)]
        values = [(torch.randn(16, 8), torch.randn(4, 16)) for _ in range(4)]
        replays_before = runtime.replays
        for i in range(40):
            w, x = bufsets[i % 3]
            vw, vx = values[i % 4]
            w.copy_(vw)
            x.copy_(vx)
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], vx @ vw)
            checks += 1
        assert runtime.replays - replays_before == 40  # every timed call replayed a graph
        assert runtime.captures <= runtime.MAX_CAPTURES
        # the last calls read both inputs in place: one graph per buffer set
        in_place = [g for g in runtime.graphs if len(g["inplace"]) == 2]
        assert len(in_place) >= 3
        assert runtime.state in in_place


def test_inputs_sliced_at_moving_offsets_still_replay():
    # A training loop taking batch i from one big tensor: same shape, another storage offset.
    runtime = make()
    w = torch.randn(16, 8)
    data = torch.randn(40, 16)
    with cpu_cuda_api():
        for i in range(8):
            x = data[4 * i:4 * i + 4]
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
            view = out[3]  # a view of the input: this call's slice, at its offset
            assert view.untyped_storage().data_ptr() == data.untyped_storage().data_ptr()
            assert view.storage_offset() == x.storage_offset()
    assert runtime.captures >= 1 and runtime.replays >= 6


def test_inputs_at_irregular_recurring_addresses_are_copied_not_recaptured():
    # A training step's saved activations: the caching allocator hands each one a buffer from a
    # small set, in no fixed order (the in-place check alternating the candidate with Inductor's
    # code shuffles them further). A graph per address seen before would capture on most calls.
    import random

    runtime = make()
    w = torch.randn(16, 8)
    pool = [torch.empty(4, 16) for _ in range(8)]
    order = random.Random(0)
    with cpu_cuda_api():
        for _ in range(48):
            x = pool[order.randrange(len(pool))]
            x.copy_(torch.randn(4, 16))
            out = runtime(eager_of(forward_like), [w, x, 1.0])
            torch.testing.assert_close(out[0], x @ w)
    assert runtime.replays >= 44
    assert runtime.captures <= 4  # the weight settles in place; the activation is copied
    assert [i for i, _ in runtime.state["inplace"]] == [0]


def test_cublas_workspaces_are_cleared_around_every_capture():
    # So the workspace a captured matmul uses is allocated in the graph's pool, not in memory
    # someone else may free (torch's CUDA graphs clear all workspaces around their recordings).
    events = []

    class RecordingGraph(FakeGraph):
        def capture_begin(self, pool=None, capture_error_mode=None):
            events.append("begin")
            super().capture_begin(pool, capture_error_mode)

        def capture_end(self):
            events.append("end")
            super().capture_end()

    cls = load_runtime()
    runtime = cls(graph_factory=RecordingGraph, stream_factory=FakeStream, device_type="cpu",
                  clear_workspaces=lambda: events.append("clear"))
    w, x = torch.randn(16, 8), torch.randn(4, 16)
    with cpu_cuda_api():
        for _ in range(4):
            runtime(eager_of(forward_like), [w, x, 2.0])
    assert runtime.captures >= 1
    assert runtime.handout_captures >= 1
    assert events == ["clear", "begin", "end", "clear"] * (runtime.captures + runtime.handout_captures)


def test_inputs_rotating_out_of_step_are_captured_at_a_paced_rate():
    # A backward's saved activations, each alternating between two buffers independently of the
    # others: nearly every call is a combination no earlier graph reads in place. Unpaced, the
    # runtime captured on most calls until its budget ran out, then ran the original.
    import random

    def chain(args):  # y = (x0 + ... + x5) @ w
        w, *xs = args
        return (torch.stack(xs).sum(0) @ w,)

    runtime = make()
    w = torch.randn(16, 8)
    buffers = [(torch.empty(4, 16), torch.empty(4, 16)) for _ in range(6)]
    order = random.Random(1)
    calls = 48
    with cpu_cuda_api():
        for _ in range(calls):
            xs = [pair[order.randrange(2)] for pair in buffers]
            for x in xs:
                x.copy_(torch.randn(4, 16))
            (out,) = runtime(eager_of(chain), [w, *xs])
            torch.testing.assert_close(out, torch.stack(xs).sum(0) @ w)
    assert runtime.eager_calls == {"warm-up": 1}  # every later call replayed a graph
    assert runtime.captures <= 2 + calls // runtime.CAPTURE_GAP
    assert any(dict(g["inplace"]) == {0: w.data_ptr()} for g in runtime.graphs)  # the fallback

