"""The memory budget: the first call's copies go to host memory where a device copy would crowd
the user's call, and a graph whose worker cannot fit is kept on Inductor with the figures."""

import pytest
import torch

from tilesmith import _memory
from tilesmith.gate import Gate, GateOptions, GateUnavailable


def test_tensor_bytes_counts_each_storage_once():
    a = torch.zeros(1024)
    assert _memory.tensor_bytes([a, a[10:], a.view(32, 32), 3, None]) == 4096
    assert _memory.tensor_bytes([a, torch.zeros(10)]) == 4096 + 40
    assert _memory.tensor_bytes([a], "cuda") == 0


def test_host_copies_keep_layout_and_offsets():
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    view = base[1:, 2:7].t()  # strided, with a storage offset
    copy = _memory._host_copy(view)
    assert torch.equal(copy, view) and copy.stride() == view.stride()
    assert copy.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()


def test_the_first_calls_copies_go_to_the_host_when_the_device_is_nearly_full():
    assert _memory.copies_go_to_host(1 << 30, 10 << 30) is None
    assert _memory.copies_go_to_host(8 << 30, 10 << 30) == (
        "memory: the inputs' copies (8.0 GiB) went to host memory, not the device (10.0 GiB free)")
    assert _memory.copies_go_to_host(8 << 30, None) is None  # no CUDA inputs
    copies, note = _memory.clone_args([torch.ones(4), 7])  # host inputs: plain clones
    assert note is None and copies[1] == 7 and torch.equal(copies[0], torch.ones(4))


def test_a_worker_that_cannot_fit_is_a_plain_reason(monkeypatch, tmp_path):
    monkeypatch.setattr(_memory, "free_bytes", lambda d: 20 << 30)
    args = [torch.zeros(2, dtype=torch.uint8)]
    monkeypatch.setattr(_memory, "tensor_bytes", lambda a, device_type=None: 30 << 30)
    why = _memory.worker_does_not_fit(args, "cuda")
    assert why == ("the gate's worker would need about 361.0 GiB of device memory (12 copies of "
                   "the 30.0 GiB of inputs for correctness and timing, plus 1.0 GiB) and 20.0 GiB "
                   "are free; nothing was evaluated")
    with pytest.raises(GateUnavailable, match="would need about 361.0 GiB"):
        Gate("def call(args):\n    return ()\n", args, tmp_path, GateOptions(device="cuda"))
    monkeypatch.setattr(_memory, "tensor_bytes", lambda a, device_type=None: 1 << 30)
    assert _memory.worker_does_not_fit(args, "cuda") is None


@pytest.mark.gpu
def test_an_input_of_a_third_of_the_card_runs_with_inductors_outputs_and_a_plain_outcome(
        tmp_path, monkeypatch):
    import tilesmith

    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))

    class Silu(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.silu(x)

    hidden = 8192
    total = torch.cuda.get_device_properties(0).total_memory
    x = torch.empty(total // 3 // (hidden * 2) + 1, hidden, dtype=torch.bfloat16,
                    device="cuda").uniform_(-4, 4)
    fn = tilesmith.compile(Silu(), example_inputs=(x,), agent_model="tilesmith-search",
                           max_optimization_s=240)
    y = fn(x)  # never an out-of-memory error raised into the user's call
    for rows in torch.split(torch.arange(x.shape[0], device="cuda"), 1 << 16):
        a, b = rows[0].item(), rows[-1].item() + 1
        torch.testing.assert_close(y[a:b], torch.nn.functional.silu(x[a:b]))
    (graph,) = tilesmith.diagnostics(fn)
    print(graph)
    # installed, or kept on Inductor with the figures that decided it
    assert graph.status.startswith("installed") or "GiB" in graph.status, graph.status
