"""The gate's worker: runs the original wrapper and a candidate in this (child) process.

Started by the host (tilesmith.gate.host) through the C++ process runner, never in the user's
process:

    python -m tilesmith.gate.worker --job JOB.json      one job, result written to the job's file
    python -m tilesmith.gate.worker --serve             fork server: reads job paths on stdin,
                                                        runs each in a forked child (a fresh
                                                        process that imported torch but never
                                                        touched CUDA), answers one status line

The worker measures and reports; the host decides (C++ ts::gate::judge_phase). Everything the
worker relies on (timers, events, comparison functions) is captured at import, before any candidate
code runs (tilesmith.gate._trusted, imported first), and is checked to be unchanged after the
candidate's import and after every call (reward hack T4). Each candidate call is checked for:
output types (T3), layout, aliasing (S4), inputs and buffers after the call (S3, S10), guard bands
around inputs (stray writes), the RNG state (S10), torch flags and the environment (S8), new
threads (T2), the persisting-L2 limit and stream access-policy windows (T6), output storage reused
across calls (T5), and values against the original on identical inputs and RNG state (S1, S5-S9,
S11-S13) with the candidate run first into freshly poisoned memory, twice, with different poison
(S2, S15).

Timing (mode "evaluate"): warm-up, then ABBA-ordered pairs (AB BA BA AB ...). Each sample uses
one of 3 buffer sets per side, refilled before the sample with one of 4 value sets (every
(buffer, values) combination recurs only every 12 samples, so a cache keyed on addresses returns
stale results), with the RNG reseeded per value set; on CUDA the L2 is flushed (tileops.timing's
flush, as tileops bench's: a read at evict_last priority) and the persisting-L2 limit reset
before it, and the interval is start event -> call -> device-wide
synchronize -> end event, so work on any stream lands inside it; the current-stream event time
and the host wall time are summed per side for the host's wall-clock cross-check. On CPU the
sample is the process's CPU time. Every timed output of both sides is checked against the
original's output for its value set, outside the interval (S12: correct for N calls, then not).
The raw samples go to the host; the statistics are computed there, in C++.

The pieces live beside this module, one concern each: _trusted (the captured references and the
tamper check), _state (flag snapshots, the CUDA driver calls), _inputs (input layout and value
classes), _poison (memory poisoning), _calls (one call and its checks), _compare (comparison).
This module keeps the job and the entry points.
"""

from __future__ import annotations

# Trusted references: captured before anything else (and before any candidate import).
from tilesmith.gate._trusted import (  # noqa: I001 - must stay the first import
    _TRUSTED, _event_elapsed, _event_record, _event_synchronize, _json_dumps, _monotonic,
    _os_write, _perf_counter, _process_time, _rebaseline, _thread_enumerate)

import argparse  # noqa: E402
import ctypes  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402

import tileops.timing  # noqa: E402
import torch  # noqa: E402

from tilesmith.gate._calls import Call, Runner  # noqa: E402,F401
from tilesmith.gate._compare import (  # noqa: E402,F401
    Comparer, _bitwise_equal, _fresh_outputs, _max_abs_diff, _reused_storage, _rough_half_width,
    alias_signature, compare_values)
from tilesmith.gate._inputs import (  # noqa: E402,F401
    GUARD_BYTES, INPUT_CLASSES, InputLayout, _direct_launch_stats, _graph_runtime_stats)
from tilesmith.gate._poison import Poisoner, _scrub  # noqa: E402,F401


# ---------------------------------------------------------------------------------------------
# The job


def _load_module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "call", None)):
        raise AttributeError(f"{os.path.basename(path)} defines no call(args)")
    return mod


def _l2_flush(device: torch.device):
    """What flushes the L2 before each timed sample: on CUDA, tileops.timing's read of a buffer
    larger than the L2 at evict_last priority (a write flush would leave dirty lines the sample
    then pays for; a plain read leaves evict_last lines in place); None elsewhere. Both names
    are checked for tampering after the candidate's import and each of its calls, so what is
    read here, once, before timing, is tileops' own."""
    if device.type != "cuda":
        return None
    buf = tileops.timing.flush_buffer(device)
    flush_l2 = tileops.timing.flush_l2
    return lambda: flush_l2(buf)


def _seed(base: int, *parts: int) -> int:
    h = base & 0xFFFFFFFFFFFF
    for p in parts:
        h = (h * 1000003 + p + 0x9E3779B9) & 0xFFFFFFFFFFFF
    return h


class Job:
    def __init__(self, spec: dict):
        self.spec = spec
        self.mode = spec["mode"]
        self.device = torch.device(spec["device"])
        self.seed = int(spec["seed"])
        self.findings: list = []
        self.trials: list = []
        self.info: dict = {}

    def finding(self, kind, where, detail):
        self.findings.append({"kind": kind, "where": where, "detail": detail})

    def run(self) -> dict:
        t_start = _perf_counter()
        if self.device.type == "cpu":
            torch.set_num_threads(int(self.spec.get("cpu_threads", 1)))
        else:
            torch.cuda.set_device(self.device.index or 0)
            torch.zeros(1, device=self.device)  # context up before any snapshot
        args = torch.load(self.spec["args"], weights_only=True)
        self.layout = InputLayout(args, self.device)
        del args
        self.original = _load_module(self.spec["original"], "tilesmith_gate_original").call
        # Warm the runtime (thread pools, library handles) with the original so that what the
        # candidate adds afterwards stands out; then snapshot the state every call is held to.
        given = self.layout.values_for("given", 0)
        warm = Runner(self.device).run(self.original, self.layout, given, 0, 0, False, "warm-up")
        if warm.error:
            raise RuntimeError(f"the original wrapper raised on its own inputs: {warm.error}")
        del warm
        rebound = _rebaseline()
        if rebound:
            self.info["rebound_by_original"] = rebound
        self.runner = Runner(self.device)
        try:
            candidate_module = _load_module(self.spec["candidate"], "tilesmith_gate_candidate")
            self.candidate = candidate_module.call
        except Exception as e:
            self.finding("exception", "import", f"{type(e).__name__}: {e}".splitlines()[0][:300])
            return self.result(t_start)
        for k, w, d in self.runner.integrity("import", True):
            self.finding(k, w, d)
        if self.findings:
            return self.result(t_start)
        self.runner.threads = set(_thread_enumerate())

        max_bytes = max([g["nbytes"] for g in self.layout.groups] + [1 << 16])
        self.poisoner = Poisoner(self.device, max_bytes)
        self.runner.poisoner = self.poisoner
        self.info["setup_s"] = _perf_counter() - t_start
        if self.mode == "profile":
            return self.profile(t_start)
        t0 = _perf_counter()
        ok = self.correctness()
        self.info["correctness_s"] = _perf_counter() - t0
        timing = None
        if ok and self.mode == "evaluate":
            t0 = _perf_counter()
            timing = self.timing()
            self.info["timing_s"] = _perf_counter() - t0
        runtime = _graph_runtime_stats(candidate_module)
        if runtime:
            self.info["candidate_graph_runtime"] = runtime
        direct = _direct_launch_stats(candidate_module)
        if direct:
            self.info["candidate_direct_launch"] = direct
        return self.result(t_start, timing)

    # -- correctness -------------------------------------------------------------------------

    def correctness(self) -> bool:
        classes = self.spec.get("classes") or INPUT_CLASSES
        prev_cand_outs = None
        self.deterministic = True
        self.spreads: dict = {}
        for ci, cls in enumerate(classes):
            where = cls
            vals = self.layout.values_for(cls, _seed(self.seed, 17, ci))
            pristine = [v.clone() for v in vals]
            rng_seed = _seed(self.seed, 29, ci)
            r = self.runner
            # Candidate first, into poisoned memory; then again with different poison.
            c1 = r.run(self.candidate, self.layout, vals, rng_seed, _seed(self.seed, 31, ci), True, where, 0xFF)
            c2 = r.run(self.candidate, self.layout, vals, rng_seed, _seed(self.seed, 37, ci), True, where, 0x7F)
            o1 = r.run(self.original, self.layout, vals, rng_seed, _seed(self.seed, 31, ci), False, where, 0xFF)
            o2 = r.run(self.original, self.layout, vals, rng_seed, _seed(self.seed, 37, ci), False, where, 0x7F)
            if o1.error or o2.error:
                raise RuntimeError(f"the original wrapper raised on {cls} inputs: {o1.error or o2.error}")
            found = list(c1.findings) + list(c2.findings)
            if c1.error or c2.error:
                found.append(("exception", where, c1.error or c2.error))
            cmp = Comparer(self.spreads)
            if not found:
                found += cmp.structure(o1, c1, where)
            if not found:
                found += cmp.structure(o1, c2, where + " (repeat)")
            if not found:
                # The original's own numerics: bitwise repeatable, or by how much it wanders.
                det = all(not isinstance(a, torch.Tensor) or _bitwise_equal(a, b)
                          for a, b in zip(o1.outs, o2.outs))
                self.deterministic = self.deterministic and det
                for i, (a, b) in enumerate(zip(o1.outs, o2.outs)):
                    if isinstance(a, torch.Tensor):
                        self.spreads[i] = max(self.spreads.get(i, 0.0), 2.0 * _max_abs_diff(a, b))
                found += cmp.values(o1, c1, where, pristine, self.layout)
                if not found:
                    for i, (a, b) in enumerate(zip(c1.outs, c2.outs)):
                        if not isinstance(a, torch.Tensor):
                            continue
                        if det and not _bitwise_equal(a, b):
                            found.append(("nondeterministic", where,
                                          f"out[{i}] differs between two runs on identical inputs "
                                          f"(max abs diff {_max_abs_diff(a, b):.3g}); the original's "
                                          "runs are bitwise identical"))
                            break
                        if not det:
                            msg = compare_values(a, b, self.spreads.get(i, 0.0), f"out[{i}]")
                            if msg:
                                found.append(("nondeterministic", where, "repeat run: " + msg))
                                break
                if not found:
                    # Fresh outputs must be fresh storage on every call (T5): checked against
                    # the previous call (still alive) and the previous class's last call.
                    fresh = _fresh_outputs(alias_signature(o1.outs, o1.inputs))
                    if _reused_storage(o1.outs, o2.outs, fresh) is None:
                        for prev, outs, label in ((c1.outs, c2.outs, "the previous call's"),
                                                  (prev_cand_outs, c1.outs, "an earlier call's")):
                            i = _reused_storage(prev, outs, fresh)
                            if i is not None:
                                found.append(("caching", where,
                                              f"out[{i}] is the same storage as {label} output "
                                              "while that is still alive; the original returns "
                                              "fresh tensors"))
                                break
            self.trials.append({"input_class": cls, "passed": not found,
                                "detail": found[0][2] if found else "ok"})
            for k, w, d in found:
                self.finding(k, w, d)
            if o1.outs is not None:
                _scrub(o1.outs)
            if o2.outs is not None:
                _scrub(o2.outs)
            prev_cand_outs = c2.outs if c2.outs is not None else c1.outs
            del o1, o2, c1
            if found:
                return False
        self.info["original_deterministic"] = self.deterministic
        return True

    # -- timing ------------------------------------------------------------------------------

    def timing(self) -> dict | None:
        cuda = self.device.type == "cuda"
        pairs = int(self.spec["pairs"])
        warmup = int(self.spec.get("warmup", 3))
        K, P = 3, 4  # buffer sets per side, value sets: every (buffer, value) pair recurs every 12
        values = [self.layout.values_for("normal", _seed(self.seed, 101, p)) for p in range(P)]
        # Static inputs (parameters) keep one value per phase, as in deployment; the next phase
        # (the confirmation) gets new ones.
        static = set(self.spec.get("static_input_idxs") or [])
        static_groups = {it[1] for j, it in enumerate(self.layout.items) if j in static and it[0] == "tensor"}
        for p in range(1, P):
            for g in static_groups:
                values[p][g] = values[0][g]
        seeds = [_seed(self.seed, 103, p) for p in range(P)]
        # Reference outputs of every value set, from the original, before any timing.
        refs = []
        for p in range(P):
            o = self.runner.run(self.original, self.layout, values[p], seeds[p], 1, False, "timing")
            refs.append([x.clone() if isinstance(x, torch.Tensor) else x for x in o.outs])
            del o
        sides = {"A": self.original, "B": self.candidate}
        bufsets = {s: [self.layout.materialize(values[0], _seed(self.seed, 107, k)) for k in range(K)]
                   for s in sides}
        flush = _l2_flush(self.device)
        Event = _TRUSTED["torch.cuda.Event"]
        sync = _TRUSTED["torch.cuda.synchronize"] if cuda else (lambda: None)
        samples = {"A": [], "B": []}
        event_sum = {"A": 0.0, "B": 0.0}
        wall_sum = {"A": 0.0, "B": 0.0}
        bad_call = None
        prev_out = {"A": None, "B": None}

        stray_thread = None

        def one(side: str, i: int, timed: bool):
            nonlocal bad_call, stray_thread
            k, p = i % K, i % P
            args, bufs = bufsets[side][k]
            self.layout.refill(bufs, values[p])
            call_args = list(args)
            torch.manual_seed(seeds[p])
            if flush is not None:
                flush()
            if cuda:
                self.runner.driver.reset_persisting()
                e0, e1, e2 = Event(enable_timing=True), Event(enable_timing=True), Event(enable_timing=True)
            sync()
            c0 = _process_time()
            t0 = _perf_counter()
            if cuda:
                _event_record(e0)
            out = sides[side](call_args)
            if cuda:
                _event_record(e1)
                sync()  # device-wide: work on any stream lands inside the interval
                _event_record(e2)
                _event_synchronize(e2)
            t1 = _perf_counter()
            if side == "B" and stray_thread is None:
                # A thread alive right after the interval runs into the original's next one
                # (T2). Checked before the output comparison: on a GPU that comparison can
                # outlast a short-lived thread (seen on the H200 with a 10 ms burner).
                extra = self.runner.new_threads()
                if extra:
                    stray_thread = (i, extra[0].name)
            if cuda:
                ms = _event_elapsed(e0, e2)
                ev = _event_elapsed(e0, e1)
            else:
                # CPU (CI): the process's CPU time, which other processes on a shared machine
                # cannot inflate; the cross-check against wall time catches work handed to
                # something that does not bill this process (a child process, a sleep-and-wait).
                ms = ev = (_process_time() - c0) * 1000.0
                if ms <= 0:
                    ms = ev = 1e-6
            if timed:
                samples[side].append(ms)
                event_sum[side] += ev
                wall_sum[side] += (t1 - t0) * 1000.0
            # Outputs of timed calls are checked too (T5, S12), outside the interval; the
            # original's as well, so that both sides see the same work between samples.
            msg = None
            if not isinstance(out, (tuple, list)) or len(out) != len(refs[p]):
                msg = "returned a different structure"
            else:
                for j, (r, o) in enumerate(zip(refs[p], out)):
                    if isinstance(r, torch.Tensor):
                        if type(o) is not torch.Tensor:
                            msg = f"out[{j}] is not a torch.Tensor"
                            break
                        msg = None if _bitwise_equal(r, o) else compare_values(
                            r, o, self.spreads.get(j, 0.0), f"out[{j}]")
                        if msg:
                            break
            if msg and side == "B" and bad_call is None:
                bad_call = (i, msg)
            elif msg and side == "A":
                self.info.setdefault("original_timed_mismatch", msg)
            prev_out[side] = out  # keep the last output alive: no pointer reuse by the allocator

        for w in range(warmup):
            one("A", w, False)
            one("B", w, False)
        # At least `pairs` pairs; then, on a device with a time budget left, more in blocks of
        # 4 until the interval is tight enough. (A rough estimate here decides only how long to
        # sample; the host recomputes the statistics from the raw samples.)
        max_pairs = max(pairs, int(self.spec.get("max_pairs") or pairs))
        target = float(self.spec.get("target_half_width", 0.008))
        budget = float(self.spec.get("timing_budget_s", 2.0))
        t_loop = _perf_counter()
        i = 0
        while i < max_pairs:
            order = ("A", "B") if i % 4 in (0, 3) else ("B", "A")  # ABBA BAAB ...
            for s in order:
                one(s, i + warmup, True)
            i += 1
            if i >= pairs and i % 4 == 0 and (
                    _perf_counter() - t_loop > budget or _rough_half_width(samples) <= target):
                break
        for k, w, d in self.runner.integrity("timing", True):
            self.finding(k, w, d)
        if bad_call is not None:
            self.finding("incorrect", f"timed call {bad_call[0] + 1}", bad_call[1])
        if stray_thread is not None:
            self.finding("background_thread", f"timed call {stray_thread[0] + 1}",
                         f"thread {stray_thread[1]} still running after the call")
        del prev_out, bufsets, refs
        return {
            "baseline_ms": samples["A"],
            "candidate_ms": samples["B"],
            "min_pairs": pairs,
            "max_pairs": max_pairs,
            "wall_clock": [event_sum["A"], wall_sum["A"], event_sum["B"], wall_sum["B"]],
            "pairs": len(samples["A"]),
            "order": "ABBA",
            "clock": "cuda events (device-wide sync inside)" if cuda else "process cpu time",
            "l2": (f"flushed before each sample ({tileops.timing.FLUSH_BYTES >> 20} MiB read at "
                   "evict_last)" if flush is not None else "not controlled (cpu)"),
            "rotation": f"{K} buffer sets per side x {P} value sets",
        }

    # -- profile -----------------------------------------------------------------------------

    def profile(self, t_start) -> dict:
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.device.type == "cuda" else [])
        vals = self.layout.values_for("normal", _seed(self.seed, 201))
        per = {}
        reps = int(self.spec.get("profile_reps", 5))
        for side, fn in (("original_ms", self.original), ("candidate_ms", self.candidate)):
            c = self.runner.run(fn, self.layout, vals, 0, 0, side == "candidate_ms", "profile")
            if c.error:
                self.finding("exception", "profile", c.error)
                return self.result(t_start)
            with profile(activities=acts) as prof:
                for _ in range(reps):
                    self.runner.run(fn, self.layout, vals, 0, 0, side == "candidate_ms", "profile")
            for ev in prof.key_averages():
                t = getattr(ev, "device_time_total", 0) if self.device.type == "cuda" else ev.self_cpu_time_total
                if t <= 0:
                    continue
                per.setdefault(ev.key, {"kernel": ev.key, "original_ms": 0.0, "candidate_ms": 0.0})
                per[ev.key][side] += t / 1000.0 / reps
        rows = sorted(per.values(), key=lambda r: -max(r["original_ms"], r["candidate_ms"]))
        res = self.result(t_start)
        res["profile"] = rows[:50]
        return res

    def result(self, t_start, timing=None) -> dict:
        return {"ok": True, "mode": self.mode, "findings": self.findings, "trials": self.trials,
                "timing": timing, "info": self.info, "worker_s": _perf_counter() - t_start}


# ---------------------------------------------------------------------------------------------
# Entry points


def _write_result(fd: int, result: dict) -> None:
    data = _json_dumps(result, default=str).encode()
    os.lseek(fd, 0, os.SEEK_SET)
    total = len(data)
    while data:
        n = _os_write(fd, data)
        data = data[n:]
    os.ftruncate(fd, total)  # whatever else was written into the file is cut off
    os.close(fd)


def run_job(job_path: str) -> int:
    """Runs one job in this process; the result goes to the job's result file."""
    import faulthandler

    faulthandler.enable()  # a crash leaves its Python stack in the job's log for the report
    with open(job_path) as f:
        spec = json.load(f)
    # The job file goes before any candidate code runs: the nonce the host expects back in the
    # result then lives only in this process's memory (a result forged from disk lacks it).
    os.unlink(job_path)
    nonce = spec.pop("nonce", "")
    # The result file is opened before any candidate code runs (O_EXCL: nobody else made it).
    fd = os.open(spec["result"], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        result = Job(spec).run()
    except Exception as e:  # a failure of the original or of the harness: reported, not judged
        result = {"ok": False, "error": f"{type(e).__name__}: {e}",
                  "traceback": traceback.format_exc()[-4000:]}
    result["nonce"] = nonce
    _write_result(fd, result)
    return 0


def _kill_leftovers() -> int:
    """Kills every other process of this server's process group (what a job left running:
    reward hack T2 with processes instead of threads). Returns how many there were. The
    server's ancestors are spared: in the sandbox, its PID namespace's init shares the group."""
    me, group = os.getpid(), os.getpgid(0)
    killed = 0
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return 0
    ancestors, pid = set(), os.getppid()
    while pid > 0 and pid not in ancestors:
        ancestors.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            pid = int(stat[stat.rfind(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            break
    for pid in pids:
        if pid == me or pid in ancestors:
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            state, _ppid, pgrp = stat[stat.rfind(")") + 2:].split()[:3]
            if int(pgrp) == group and state != "Z":
                os.kill(pid, signal.SIGKILL)
                killed += 1
        except (OSError, ValueError):
            continue
    while True:  # reap any that were our own children
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    return killed


def _cuda_driver_initialized() -> bool:
    """Whether cuInit ran in this process (cuDeviceGetCount answers NOT_INITIALIZED before it;
    it initializes nothing itself). A forked child cannot use CUDA after its parent did."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    n = ctypes.c_int(0)
    return lib.cuDeviceGetCount(ctypes.byref(n)) != 3  # CUDA_ERROR_NOT_INITIALIZED


def _preload() -> None:
    """Imports every job needs (Inductor's wrapper header), once, in the server."""
    for mod in ("torch._inductor.async_compile", "torch._inductor.select_algorithm"):
        try:
            importlib.import_module(mod)
        except Exception:
            pass


def serve(preload: bool = False) -> int:
    """Fork server: one job path per stdin line, one JSON status line per job on stdout."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    # Nothing but status lines may reach the host's stdout pipe.
    os.dup2(2, 1)
    if preload:
        _preload()
    # Forking is only sound while this process has never touched CUDA; otherwise every job gets
    # a new interpreter instead (slower, same isolation).
    fork = not torch.cuda.is_initialized() and not _cuda_driver_initialized()
    from tilesmith._sandbox import gate_code_digest

    # The host compares this with the digest it took at import: the code this server runs is the
    # code the host trusts.
    out.write(_json_dumps({"ready": True, "pid": os.getpid(), "torch": torch.__version__,
                           "fork": fork, "code_sha256": gate_code_digest()}) + "\n")
    for line in sys.stdin:
        job_path = line.strip()
        if not job_path:
            continue
        t0 = _monotonic()
        if not fork:
            import subprocess

            log = open(os.path.join(os.path.dirname(job_path), "worker.log"), "ab")
            r = subprocess.run([sys.executable, "-P", "-m", "tilesmith.gate.worker", "--job", job_path],
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            log.close()
            sig = -r.returncode if r.returncode < 0 else 0
            out.write(_json_dumps({"job": job_path, "exit_code": max(r.returncode, 0), "signal": sig,
                                   "leftover_processes": _kill_leftovers(),
                                   "wall_s": _monotonic() - t0}) + "\n")
            continue
        pid = os.fork()
        if pid == 0:
            rc = 1
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                log = os.open(os.path.join(os.path.dirname(job_path), "worker.log"),
                              os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
                os.dup2(log, 1)
                os.dup2(log, 2)
                devnull = os.open(os.devnull, os.O_RDONLY)
                os.dup2(devnull, 0)  # the job pipe stays the server's
                out.close()
                rc = run_job(job_path)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(rc)
        _, status = os.waitpid(pid, 0)
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        leftover = _kill_leftovers()
        out.write(_json_dumps({"job": job_path, "exit_code": code, "signal": sig,
                               "leftover_processes": leftover,
                               "wall_s": _monotonic() - t0}) + "\n")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tilesmith.gate.worker")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--job", help="run one job (JSON spec) and write its result file")
    g.add_argument("--serve", action="store_true", help="fork server reading job paths on stdin")
    p.add_argument("--preload", action="store_true",
                   help="with --serve: import Inductor's runtime once in the server")
    a = p.parse_args(argv)
    if a.serve:
        return serve(a.preload)
    return run_job(a.job)


if __name__ == "__main__":
    sys.exit(main())
