"""The worker's calls: one call of a wrapper on fresh inputs, with the checks after it.

    runner = Runner(device)
    c = runner.run(fn, layout, values, seed, canary_seed, is_candidate, where, poison=0xFF)
    c.outs, c.ready, c.inputs, c.bufs, c.rng_cpu, c.rng_cuda, c.error, c.findings

After a candidate's call (or import) `integrity` looks for replaced trusted references (T4),
changed flags or environment (S8, restored), new threads (T2), a persisting-L2 limit or stream
access-policy window (T6); on CUDA the call also reports work left running on another stream (T1).
"""

from __future__ import annotations

import torch

from tilesmith.gate._inputs import InputLayout
from tilesmith.gate._state import _CudaDriver, _flag_changes, _flags, _restore_flags
from tilesmith.gate._trusted import (_TRUSTED, _event_record, _event_synchronize, _perf_counter,
                                     _tampered, _thread_enumerate)


class Call:
    __slots__ = ("outs", "ready", "inputs", "bufs", "rng_cpu", "rng_cuda", "error", "findings")

    def __init__(self):
        self.outs = None
        self.ready = None  # CUDA: copies taken on the current stream right after return
        self.inputs = None
        self.bufs = None
        self.rng_cpu = None
        self.rng_cuda = None
        self.error = None
        self.findings = []


class Runner:
    def __init__(self, device: torch.device):
        self.device = device
        self.cuda = device.type == "cuda"
        self.driver = _CudaDriver() if self.cuda else None
        self.flags = _flags()
        self.threads = set(_thread_enumerate())
        self.busy_floor_ms = 0.25
        # The persisting-L2 limit as this context starts, after a reset: on the H200 machines it
        # reads 11796480 bytes even then, so only a limit above the reset value
        # is the candidate's doing.
        self.persisting_floor = 0
        if self.cuda:
            _TRUSTED["torch.cuda.synchronize"]()  # the context exists before its limit is read
            self.driver.reset_persisting()
            self.persisting_floor = self.driver.persisting_limit() or 0
        if self.cuda:
            # What a device sync costs on an idle device here (slow under some sandboxes): the
            # side-stream probe below only counts lag well above it.
            idle = []
            for _ in range(5):
                e = _TRUSTED["torch.cuda.Event"]()
                _event_record(e)
                _event_synchronize(e)
                t = _perf_counter()
                _TRUSTED["torch.cuda.synchronize"]()
                idle.append((_perf_counter() - t) * 1000.0)
            self.busy_floor_ms = max(0.25, 5.0 * max(idle))

    def sync(self):
        if self.cuda:
            _TRUSTED["torch.cuda.synchronize"]()

    def new_threads(self) -> list:
        """Threads alive now that were not running when the baseline was taken."""
        return [t for t in _thread_enumerate() if t not in self.threads and t.is_alive()]

    def integrity(self, where: str, is_candidate: bool) -> list:
        """Findings about global state after a call (or import). Restores what it can."""
        f = []
        if not is_candidate:
            return f
        bad = _tampered()
        if bad:
            f.append(("tamper", where, "replaced in the worker: " + ", ".join(bad[:6])))
        now = _flags()
        changed = _flag_changes(self.flags, now)
        if changed:
            f.append(("global_flag", where, "changed " + "; ".join(changed[:4])))
            _restore_flags(self.flags)
        new_threads = self.new_threads()
        if new_threads:
            f.append(("background_thread", where,
                      f"{len(new_threads)} thread(s) still running after the call: "
                      + ", ".join(t.name for t in new_threads[:3])))
        if self.cuda:
            lim = self.driver.persisting_limit()
            lim = lim if lim and lim > self.persisting_floor else 0
            if lim:
                f.append(("persisting_l2", where, f"persisting-L2 limit set to {lim} bytes"))
            try:
                win = self.driver.access_window_bytes(torch.cuda.current_stream().cuda_stream)
            except Exception:
                win = None
            if win:
                f.append(("persisting_l2", where, f"access-policy window of {win} bytes on the stream"))
            if lim or win:
                self.driver.reset_persisting()
        return f

    def run(self, fn, layout: InputLayout, values, seed: int, canary_seed: int,
            is_candidate: bool, where: str, poison: int | None = None) -> Call:
        c = Call()
        args, bufs = layout.materialize(values, canary_seed)
        c.inputs = list(args)
        c.bufs = bufs
        if poison is not None:  # after the inputs took their blocks: the rest is garbage
            self.poisoner.poison(poison)
        self.sync()
        torch.manual_seed(seed)
        try:
            outs = fn(args)
            c.outs = outs
        except Exception as e:  # the candidate's own exception: a finding, not a worker crash
            c.error = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        if self.cuda and isinstance(c.outs, (tuple, list)):
            # What a consumer on the current stream would read (T1: work left on a side stream
            # is not finished here), then: is the device still busy once the current stream is?
            c.ready = [o.clone() if type(o) is torch.Tensor else o for o in c.outs]
            done = _TRUSTED["torch.cuda.Event"]()
            _event_record(done)
            _event_synchronize(done)
            t = _perf_counter()
            self.sync()
            lag_ms = (_perf_counter() - t) * 1000.0
            if is_candidate and lag_ms > self.busy_floor_ms:
                c.findings.append(("timing_suspicious", where,
                                   f"the device was busy {lag_ms:.3f} ms after the current stream "
                                   "finished (work on another stream)"))
        self.sync()
        c.rng_cpu = torch.get_rng_state()
        if self.cuda:
            c.rng_cuda = torch.cuda.get_rng_state()
        c.findings.extend(self.integrity(where, is_candidate))
        return c
