"""dev/decode_probe.py's timeline analysis on a small made-up CUPTI trace (no GPU)."""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import torch

SCRIPT = Path(__file__).resolve().parents[2] / "dev" / "decode_probe.py"


def load_probe():
    spec = importlib.util.spec_from_file_location("decode_probe", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Event:
    def __init__(self, start, duration, name, device=torch.autograd.DeviceType.CUDA):
        self._start, self._duration, self._name, self._device = start, duration, name, device

    def start_ns(self):
        return self._start

    def duration_ns(self):
        return self._duration

    def name(self):
        return self._name

    def device_type(self):
        return self._device


def test_median_gap_before_each_kernel_and_its_duration():
    events = [Event(5000, 500, "reduce_kernel"), Event(1000, 500, "reduce_kernel"),
              Event(1600, 300, "rms_norm_kernel"), Event(3000, 500, "reduce_kernel"),
              Event(3900, 340, "rms_norm_kernel"), Event(5800, 320, "rms_norm_kernel"),
              Event(1550, 10, "cudaLaunchKernel", torch.autograd.DeviceType.CPU)]
    prof = SimpleNamespace(profiler=SimpleNamespace(
        kineto_results=SimpleNamespace(events=lambda: events)))
    gaps = load_probe().timeline_gaps(prof)
    # after each reduce: 1600-1500, 3900-3500, 5800-5500 -> median 300; durations median 320
    assert gaps["rms_norm_kernel"] == (300, 320, 3)
    assert gaps["reduce_kernel"] == (930, 500, 2)  # 3000-1900, 5000-4240 (host events ignored)
