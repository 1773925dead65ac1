"""The host side of the gate: runs workers, never candidate code, and decides in C++.

    gate = Gate(original_source, args, track_dir, GateOptions(device="cuda"))
    report = gate.evaluate(candidate_source, label="fuse-softmax")
    report.verdict, report.reason, report.summary()

The user's tensors are copied once (layout, storage offsets and argument aliasing kept) into a
private temporary directory with torch.save; workers load those copies. Each job runs in a fresh
process: a child forked from a fork server that imported torch but never touched CUDA (started
through the C++ process runner, no network, scrubbed environment), or, with
fork_server=False, a new interpreter per job. The deadline and the process-group kill belong to
the C++ runner; a crash, hang or CUDA fault ends only the worker.

Workers run in the sandbox of tilesmith._sandbox (bubblewrap): candidate code sees the host's
files read-only, no home directory, no other process, no network, and writes only the gate's
private directory and its own /tmp. Where the sandbox cannot run, GateOptions.sandbox decides:
"required" (any model's candidates) refuses to evaluate, "preferred" (the built-in search agent,
whose candidates are the host's own rewrites) runs unsandboxed and says so in `sandbox_note`.
The worker imports the gate's code with `python -P` (no writable directory on sys.path), and
before every job the host checks that the package still hashes as it did at import.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilesmith import _core
from .. import _memory, _sandbox

# The gate's code as it was when this process imported it; checked before every job.
_GATE_CODE_SHA256 = _sandbox.gate_code_digest()


class GateUnavailable(RuntimeError):
    """The gate cannot evaluate here (no sandbox where one is required)."""


class GateIntegrityError(RuntimeError):
    """The gate's own code changed on disk after import, or a worker runs other code."""


def _default_min_improvement() -> float:
    raw = os.environ.get("TILESMITH_MIN_IMPROVEMENT")
    if raw is None or raw == "":
        return 0.02
    try:
        v = float(raw)
    except ValueError:
        raise ValueError(f"TILESMITH_MIN_IMPROVEMENT={raw!r} is not a number") from None
    if not (0.0 <= v < 1.0):
        raise ValueError(f"TILESMITH_MIN_IMPROVEMENT={raw!r} must be in [0, 1)")
    return v


@dataclass
class GateOptions:
    device: str = "cuda"  # "cuda" | "cpu" (CPU is admitted for CI)
    min_improvement: float = field(default_factory=_default_min_improvement)
    timeout_s: float = 300.0  # per worker job
    confirm: bool = True  # fresh-process confirmation with new input values
    static_input_idxs: list = field(default_factory=list)
    seed: int = 0
    python: str = sys.executable
    pairs: int | None = None  # timed ABBA pairs per phase (at least); None: 200 cuda, 40 cpu
    max_pairs: int | None = None  # more pairs while the CI is wider than target_half_width and
    #                               timing_budget_s lasts; None: 1000 on cuda, = pairs on cpu
    target_half_width: float = 0.008  # log-space CI half-width at which sampling may stop
    timing_budget_s: float = 2.0
    warmup: int = 3
    max_ci_half_width: float | None = None  # log-space cap; None: 0.10 on cuda, 0.50 on cpu
    min_samples: int = 20
    wall_clock_max_drop: float = 0.5
    fork_server: bool = True  # False: a new interpreter per job (slower, no shared parent)
    cpu_threads: int = 1  # torch threads in CPU workers (fewer threads, less noise)
    startup_timeout_s: float = 300.0  # importing torch in a fresh interpreter
    prestart: bool = True  # start the fork server at construction: its imports (seconds) then
    #                        overlap the agent's first turn instead of the first evaluation
    sandbox: str = "required"  # "required" | "preferred": see the module docstring

    def resolved_max_pairs(self) -> int:
        if self.max_pairs is not None:
            return max(int(self.max_pairs), self.resolved_pairs())
        return 1000 if self.device.startswith("cuda") else self.resolved_pairs()

    def resolved_half_width(self) -> float:
        if self.max_ci_half_width is not None:
            return float(self.max_ci_half_width)
        # A shared CPU (CI) is far noisier than a GPU's event timer; the threshold at the CI's
        # lower bound still applies unchanged.
        return 0.10 if self.device.startswith("cuda") else 0.50

    def resolved_pairs(self) -> int:
        if self.pairs is not None:
            return int(self.pairs)
        return 200 if self.device.startswith("cuda") else 40


@dataclass
class GateReport:
    verdict: str
    reason: str
    speedup: float
    correctness: list
    timing: dict | None
    confirmed: bool
    kind: str = ""
    label: str = ""
    path: str = ""
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in
             ("verdict", "reason", "kind", "speedup", "correctness", "timing", "confirmed",
              "label", "path")}
        d.update(self.details)
        return d

    def summary(self) -> str:
        lines = [self.reason]
        if self.correctness:
            lines.append("correctness: " + ", ".join(
                f"{c['input_class']} {'ok' if c['passed'] else 'FAIL'}" for c in self.correctness))
        t = self.timing
        if t:
            lines.append(
                f"timing: original {t['original_ms']:.4g} ms, candidate {t['candidate_ms']:.4g} ms, "
                f"ratio {t['ratio']:.4f} (CI {t['ratio_lower']:.4f}-{t['ratio_upper']:.4f}), "
                f"{t['pairs']} ABBA pairs, spread {t['spread_pct']:.1f}%")
        if self.path:
            lines.append(f"report: {self.path}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Copies of the user's arguments


def _snapshot_args(args: list) -> list:
    """CPU copies with the same sizes, strides and storage offsets, aliasing between arguments
    kept (one copied storage per distinct source storage). Nothing here aliases `args`."""
    import torch

    copies = {}
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            st = a.untyped_storage()
            key = (st.data_ptr(), st.nbytes(), str(a.device))
            if key not in copies:
                raw = torch.empty(st.nbytes(), dtype=torch.uint8)
                if st.nbytes():
                    src = torch.empty(0, dtype=torch.uint8, device=a.device).set_(st)
                    raw.copy_(src)
                copies[key] = raw.untyped_storage()
            t = torch.empty(0, dtype=a.dtype)
            t.set_(copies[key], a.storage_offset(), tuple(a.shape), tuple(a.stride()))
            out.append(t)
        elif a is None or isinstance(a, (bool, int, float, str)):
            out.append(a)
        elif isinstance(a, (torch.dtype, torch.device)) or type(a).__name__.startswith("Sym"):
            out.append(int(a) if type(a).__name__ == "SymInt" else a)
        else:
            raise TypeError(f"Gate: argument of type {type(a).__name__} cannot be sent to a worker")
    return out


def _worker_env() -> dict:
    """The worker's whole environment: what Python, torch and CUDA need, no credentials."""
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LD_LIBRARY_PATH", "CUDA_HOME",
            "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "XDG_CACHE_HOME", "OMP_NUM_THREADS"}
    # NCCL_/NVSHMEM_/TORCH_: the GPU machine's safety settings (NVLink multicast off) must reach
    # every child that starts with its own environment.
    prefixes = ("TORCHINDUCTOR_", "TRITON_", "CUDA_", "NVIDIA_", "TORCH_", "PYTORCH_", "NCCL_",
                "NVSHMEM_", "CUBLAS_", "CUBLASLT_", "CUDNN_", "OMP_", "MKL_")
    secret = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.I)
    env = {}
    for k, v in os.environ.items():
        if secret.search(k):
            continue
        if k in keep or k.startswith(prefixes):
            env[k] = v
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(_sandbox.import_paths()))
    # torch.cuda.is_available() through NVML, not cuInit: the fork server may ask it (Inductor's
    # imports do) and must stay free of CUDA for its forked jobs.
    env["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    # Triton kernels compile inside the job: with more threads, loading a CUDA wrapper starts
    # Inductor's compile-worker pool, which outlives the job and is (rightly) reported as a
    # process the candidate left behind. Seen on the H200: every candidate rejected that way.
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    return env


def _log_summary(text: str) -> str:
    """The useful part of a worker log: a fatal error and the innermost frames of the candidate
    (faulthandler format), else the last lines."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fatal = next((ln for ln in lines if ln.startswith("Fatal Python error")), None)
    if fatal:
        frames = [ln for ln in lines if ln.startswith("File ") and "candidate.py" in ln][:2]
        frames = [re.sub(r'File "?[^"]*candidate\.py"?,', "candidate.py", f) for f in frames]
        return "; ".join([fatal] + frames)
    keep = [ln for ln in lines if not ln.startswith("Extension modules")]
    return _tail("\n".join(keep[-6:]))


def _tail(text: str, n: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


# ---------------------------------------------------------------------------------------------


class Gate:
    def __init__(self, original_source: str, args: list, track_dir, options: GateOptions | None = None):
        import torch

        _check_source(original_source, "Gate: original_source", "the original wrapper")
        if not isinstance(args, (list, tuple)):
            raise TypeError("Gate: args must be the list of call arguments")
        self.options = dataclasses.replace(options) if options is not None else GateOptions()
        if self.options.device not in ("cpu", "cuda") and not self.options.device.startswith("cuda:"):
            raise ValueError(f"Gate: device {self.options.device!r} is not 'cuda' or 'cpu'")
        if self.options.sandbox not in ("required", "preferred"):
            raise ValueError(f"Gate: sandbox {self.options.sandbox!r} is not 'required' or "
                             "'preferred'")
        too_big = _memory.worker_does_not_fit(args, self.options.device)
        if too_big is not None:
            raise GateUnavailable(too_big)
        self.track_dir = Path(track_dir)
        self.profiles = self.track_dir / "profiles"
        self.profiles.mkdir(parents=True, exist_ok=True)
        self._dir = Path(tempfile.mkdtemp(prefix="tilesmith-gate-"))  # 0700
        self._box = _sandbox.worker_sandbox(self._dir, self.options.device)
        why_not = _sandbox.sandbox_unavailable()
        if why_not is not None:
            self._box = None
            if self.options.sandbox == "required":
                shutil.rmtree(self._dir, ignore_errors=True)
                self._dir = None
                raise GateUnavailable(f"the worker sandbox does not run here: {why_not}")
        self.sandbox_note = ("candidates run sandboxed" if self._box is not None else
                             f"candidates run without a sandbox ({why_not})")
        if self._box is not None and (unbounded := _sandbox.processes_unbounded(self._box)):
            self.sandbox_note += f"; {unbounded}: the job's deadline ends them"
        self._original_path = self._dir / "original.py"
        self._original_path.write_text(original_source)
        self._original_sha = hashlib.sha256(original_source.encode()).hexdigest()
        self._args_path = self._dir / "args.pt"
        torch.save(_snapshot_args(list(args)), self._args_path)
        self._server = None
        self._server_info: dict = {}
        self._server_jobs = 0
        self._jobs = 0
        self._evaluations = 0
        self._env = _worker_env()
        if self._box is not None:
            # Private compile caches: the user's Inductor and Triton caches are hidden (a
            # candidate must not plant kernels the user's process would load later).
            for var, sub in (("HOME", "home"), ("TRITON_CACHE_DIR", "triton"),
                             ("TORCHINDUCTOR_CACHE_DIR", "inductor")):
                (self._dir / sub).mkdir(exist_ok=True)
                self._env[var] = str(self._dir / sub)
            self._env["TMPDIR"] = "/tmp"
        self._server_ready = False
        if self.options.fork_server and self.options.prestart:
            self._spawn_server()

    # -- lifecycle ---------------------------------------------------------------------------

    def close(self) -> None:
        self._stop_server()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _stop_server(self) -> None:
        if self._server is not None:
            try:
                self._server.stop(1.0)
            finally:
                self._server = None
                self._server_ready = False

    def wait_ready(self) -> float:
        """Blocks until the worker server is up (started if need be); returns the seconds waited."""
        t0 = time.monotonic()
        if self.options.fork_server:
            self._ensure_server()
        return time.monotonic() - t0

    # -- public API --------------------------------------------------------------------------

    def evaluate(self, candidate_source: str, label: str = "") -> GateReport:
        self._evaluations += 1
        o = self.options
        main = self._phase("evaluate", candidate_source, _seed_for(o.seed, self._evaluations), timed=True)
        confirm = None
        if main["verdict"].passed and o.confirm:
            # A new process and input values nobody (candidate included) could know in advance.
            confirm = self._phase("confirm", candidate_source, secrets.randbits(48), timed=True)
        v = _core.gate_decide(main["verdict"], confirm["verdict"] if confirm else None,
                                require_confirmation=o.confirm)
        return self._report(v, main, confirm, candidate_source, label or "candidate")

    def rebase(self, source: str) -> None:
        """Judges later candidates against `source` (the winner of an earlier loop, which is what
        would be installed) instead of the original: the installed code never gets slower from
        one loop to the next."""
        _check_source(source, "Gate.rebase: source", "the new baseline")
        if self._dir is None:
            raise RuntimeError("Gate: used after close()")
        self._original_path.write_text(source)
        self._original_sha = hashlib.sha256(source.encode()).hexdigest()

    def check(self, candidate_source: str) -> GateReport:
        self._evaluations += 1
        main = self._phase("check", candidate_source, _seed_for(self.options.seed, self._evaluations), timed=False)
        v = _core.gate_decide(main["verdict"], None, require_confirmation=False)
        return self._report(v, main, None, candidate_source, "check")

    def profile(self, candidate_source: str) -> list:
        if not isinstance(candidate_source, str):
            raise TypeError("Gate: candidate_source must be the candidate module's source text")
        job = self._job("profile", candidate_source, _seed_for(self.options.seed, 0))
        res = job["result"]
        if not job["outcome"]["completed"] or not res or not res.get("ok"):
            raise RuntimeError("Gate.profile: the profiling worker failed: "
                               + (job["outcome"]["detail"] or (res or {}).get("error", "no result")))
        if res.get("findings"):
            f = res["findings"][0]
            raise RuntimeError(f"Gate.profile: candidate rejected while profiling: {f['kind']} "
                               f"({f['where']}: {f['detail']})")
        return res.get("profile", [])

    # -- phases ------------------------------------------------------------------------------

    def _phase(self, phase: str, candidate_source: str, seed: int, timed: bool) -> dict:
        o = self.options
        if not isinstance(candidate_source, str):
            raise TypeError("Gate: candidate_source must be the candidate module's source text")
        try:
            compile(candidate_source, "<candidate>", "exec")
        except (SyntaxError, ValueError, TypeError) as e:
            ev = _core.gate_judge_phase(phase, completed=True,
                                          findings=[("exception", "import", f"SyntaxError: {e}")])
            return {"phase": phase, "verdict": ev, "outcome": {"completed": True}, "result": None,
                    "seed": seed}
        mode = "evaluate" if timed else "check"
        job = self._job(mode, candidate_source, seed)
        out, res = job["outcome"], job["result"]
        completed = out["completed"] and res is not None and bool(res.get("ok"))
        detail = out["detail"]
        if out["completed"] and res is not None and not res.get("ok"):
            detail = "worker error: " + str(res.get("error", ""))[:400]
        elif out["completed"] and res is None:
            detail = "the worker wrote no result" + (f" ({detail})" if detail else "")
        findings = [(f["kind"], f["where"], f["detail"]) for f in (res or {}).get("findings", [])] if completed else []
        if out.get("leftover_processes"):
            findings.insert(0, ("background_thread", "worker",
                                f"{out['leftover_processes']} process(es) the candidate started were "
                                "still running after the job and were killed"))
        timing = (res or {}).get("timing") if completed else None
        try:
            ev = _core.gate_judge_phase(
                phase, completed=completed, timed_out=out["timed_out"], term_signal=out["signal"],
                exit_code=out["exit_code"], worker_detail=detail, findings=findings,
                timed=timing is not None,
                baseline_ms=[float(x) for x in (timing or {}).get("baseline_ms", [])],
                candidate_ms=[float(x) for x in (timing or {}).get("candidate_ms", [])],
                wall_clock=tuple(float(x) for x in timing["wall_clock"]) if timing and timing.get("wall_clock") else None,
                host_wall_s=out["wall_s"], min_improvement=o.min_improvement,
                max_ci_half_width=o.resolved_half_width(), min_samples=o.min_samples,
                wall_clock_max_drop=o.wall_clock_max_drop)
        except (ValueError, TypeError, KeyError) as e:  # a malformed (possibly forged) result
            ev = _core.gate_judge_phase(phase, completed=False, worker_detail=f"malformed result: {e}")
        if timed and completed and timing is None and not findings:
            ev = _core.gate_judge_phase(phase, completed=False, worker_detail="no timing in the result")
        return {"phase": phase, "verdict": ev, "outcome": out, "result": res, "seed": seed}

    def _job(self, mode: str, candidate_source: str, seed: int) -> dict:
        if self._dir is None:
            raise RuntimeError("Gate: used after close()")
        if _sandbox.gate_code_digest() != _GATE_CODE_SHA256:
            raise GateIntegrityError(
                f"the gate's code in {_sandbox.gate_code_root()} changed since this process "
                "imported it; nothing is evaluated until Tilesmith is reinstalled and reimported")
        o = self.options
        self._jobs += 1
        jd = self._dir / "jobs" / f"{self._jobs:04d}"
        jd.mkdir(parents=True)
        cand = jd / "candidate.py"
        cand.write_text(candidate_source)
        spec = {
            "mode": mode, "device": o.device, "seed": int(seed),
            "original": str(self._original_path), "candidate": str(cand),
            "args": str(self._args_path), "result": str(jd / "result.json"),
            "pairs": o.resolved_pairs(), "max_pairs": o.resolved_max_pairs(),
            "target_half_width": o.target_half_width, "timing_budget_s": o.timing_budget_s,
            "warmup": o.warmup, "cpu_threads": o.cpu_threads,
            "static_input_idxs": list(o.static_input_idxs),
            "nonce": secrets.token_hex(16),
        }
        job_path = jd / "job.json"
        job_path.write_text(json.dumps(spec))
        if o.fork_server:
            outcome = self._run_forked(job_path)
        else:
            outcome = self._run_fresh(job_path)
        result = None
        rp = jd / "result.json"
        if outcome["completed"] and rp.exists():  # a worker that died wrote nothing trustworthy
            try:
                result = json.loads(rp.read_text())
                if not isinstance(result, dict):
                    raise ValueError("not an object")
                if result.get("nonce") != spec["nonce"]:
                    raise ValueError("it does not carry this job's nonce (forged?)")
            except ValueError as e:
                outcome["completed"] = False
                outcome["detail"] = f"unreadable result: {e}"
                result = None
        if result is None or not result.get("ok"):
            log = jd / "worker.log"
            if log.exists() and not outcome["detail"]:
                outcome["detail"] = _log_summary(log.read_text(errors="replace"))
        shutil.rmtree(jd, ignore_errors=True)  # everything worth keeping is in the report
        return {"outcome": outcome, "result": result}

    def _run_fresh(self, job_path: Path) -> dict:
        o = self.options
        t0 = time.monotonic()
        r = _core.proc_run([o.python, "-P", "-m", "tilesmith.gate.worker", "--job", str(job_path)],
                             env=self._env, cwd=str(self._dir),
                             timeout_s=o.timeout_s + o.startup_timeout_s, no_network=True,
                             sandbox=self._box)
        wall = time.monotonic() - t0
        return {"completed": r.succeeded, "timed_out": r.timed_out, "signal": r.term_signal,
                "exit_code": r.exit_code if not r.timed_out and r.term_signal == 0 else 0,
                "wall_s": wall,
                "detail": (f"deadline {o.timeout_s:g} s passed" if r.timed_out
                           else _tail(r.stderr.decode(errors="replace")) if not r.succeeded else "")}

    def _spawn_server(self) -> None:
        o = self.options
        argv = [o.python, "-P", "-m", "tilesmith.gate.worker", "--serve"]
        if o.device.startswith("cuda"):
            argv.append("--preload")  # Inductor's CUDA wrappers: import its runtime once
        self._server = _core.ChildProcess.start(argv, env=self._env, cwd=str(self._dir),
                                                  no_network=True, sandbox=self._box)
        self._server_ready = False

    def _ensure_server(self):
        if self._server is not None and self._server_ready and self._server.is_running():
            return self._server
        if self._server is None or self._server_ready:  # never started, or died after starting
            self._stop_server()
            self._spawn_server()
        srv = self._server
        try:
            line = srv.read_line(self.options.startup_timeout_s)
            info = json.loads(line)
            if not info.get("ready"):
                raise RuntimeError(line)
            if info.get("code_sha256") != _GATE_CODE_SHA256:
                raise GateIntegrityError(
                    "the worker runs other code than the gate imported (package digest "
                    f"{info.get('code_sha256')} != {_GATE_CODE_SHA256})")
            self._server_info = {"pid": info.get("pid"), "fork": info.get("fork"),
                                 "torch": info.get("torch"), "network": srv.network}
        except GateIntegrityError:
            self._stop_server()
            raise
        except Exception as e:
            err = _tail(srv.stderr.decode(errors="replace"))
            self._stop_server()
            raise RuntimeError(f"Gate: the worker server did not start: {e}; stderr: {err}") from None
        self._server_ready = True
        return srv

    def _run_forked(self, job_path: Path) -> dict:
        o = self.options
        srv = self._ensure_server()
        t0 = time.monotonic()
        out = {"completed": False, "timed_out": False, "signal": 0, "exit_code": 0, "wall_s": 0.0, "detail": ""}
        try:
            srv.write_stdin((str(job_path) + "\n").encode(), 10.0)
            while True:
                left = o.timeout_s - (time.monotonic() - t0)
                if left <= 0:
                    raise TimeoutError("deadline")
                line = srv.read_line(left)
                try:
                    status = json.loads(line)
                except ValueError:
                    continue  # not a status line: the protocol only trusts JSON for this job
                if isinstance(status, dict) and status.get("job") == str(job_path):
                    break
        except TimeoutError:
            self._stop_server()  # group kill: the server, the job's process and its children
            out.update(timed_out=True, wall_s=time.monotonic() - t0,
                       detail=f"deadline {o.timeout_s:g} s passed; worker killed")
            return out
        except Exception as e:  # the server itself died
            err = _tail(srv.stderr.decode(errors="replace"))
            self._stop_server()
            out.update(signal=0, exit_code=1, wall_s=time.monotonic() - t0,
                       detail=f"worker server died: {e}; {err}")
            return out
        out["wall_s"] = time.monotonic() - t0
        out["signal"] = int(status.get("signal", 0))
        out["exit_code"] = int(status.get("exit_code", 0)) if out["signal"] == 0 else 0
        out["completed"] = out["signal"] == 0 and out["exit_code"] == 0
        out["leftover_processes"] = int(status.get("leftover_processes", 0))
        return out

    # -- reports -----------------------------------------------------------------------------

    def _report(self, v, main: dict, confirm: dict | None, candidate_source: str, label: str) -> GateReport:
        res = main["result"] or {}
        correctness = list(res.get("trials", []))
        timing = None
        st = main["verdict"].stats
        if st is not None:
            timing = {
                "original_ms": st.baseline_median_ms, "candidate_ms": st.candidate_median_ms,
                "ratio": st.ratio, "ratio_lower": st.ratio_lower, "ratio_upper": st.ratio_upper,
                "pairs": st.n,
                "spread_pct": 100.0 * (st.ratio_p90 - st.ratio_p10) / (2.0 * st.ratio),
                "ci_half_width_pct": 100.0 * st.ci_half_width_log,
            }
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)[:60].strip("-") or "candidate"
        n = len(list(self.profiles.glob("*.json")))
        path = self.profiles / f"{n:03d}_{safe}.json"
        while path.exists():
            n += 1
            path = self.profiles / f"{n:03d}_{safe}.json"
        details = {
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "device": self.options.device,
            "min_improvement": self.options.min_improvement,
            "original_sha256": self._original_sha,
            "candidate_sha256": hashlib.sha256(candidate_source.encode()).hexdigest(),
            "speedup_ci": [v.speedup_lower, v.speedup_upper],
            "worker_server": dict(self._server_info) if self.options.fork_server else None,
            "phases": [_phase_dict(p) for p in (main, confirm) if p is not None],
        }
        details["sandbox"] = self.sandbox_note
        report = GateReport(verdict="accepted" if v.accept else "rejected", reason=v.reason,
                            speedup=v.speedup if st is not None else 0.0, correctness=correctness,
                            timing=timing, confirmed=v.confirmed, kind=v.kind, label=label,
                            path=str(path), details=details)
        report = _redacted(report)
        _core.write_file_atomic(str(path), json.dumps(report.to_dict(), indent=1, default=str).encode())
        return report


def _check_source(source, what: str, name: str) -> None:
    """A wrapper module's text that parses as Python, else TypeError/ValueError naming it."""
    if not isinstance(source, str):
        raise TypeError(f"{what} must be a wrapper module's source text")
    try:
        compile(source, f"<{name}>", "exec")
    except SyntaxError as e:
        raise ValueError(f"Gate: {name} does not parse: {e}") from None


def _redacted(report: GateReport) -> GateReport:
    """The report with every secret this process knows removed: a candidate's exception message
    or log can quote anything the candidate could read."""
    text = json.dumps(dataclasses.asdict(report), default=str)
    clean = _core.agent.redact(text)
    if clean == text:
        return report
    return GateReport(**json.loads(clean))


def _seed_for(base: int, k: int) -> int:
    return (int(base) * 1_000_003 + k * 7919 + 12345) & ((1 << 48) - 1)


def _stats_dict(st) -> dict | None:
    if st is None:
        return None
    keys = ("n", "ratio", "ratio_lower", "ratio_upper", "confidence", "ci_achieved", "improvement",
            "improvement_lower", "ci_half_width_log", "ratio_p10", "ratio_p90", "log_ratio_mad",
            "outliers", "baseline_median_ms", "candidate_median_ms")
    return {k: getattr(st, k) for k in keys}


def _phase_dict(p: dict) -> dict:
    v = p["verdict"]
    res = p["result"] or {}
    wc = v.wall_clock
    return {
        "phase": p["phase"], "passed": v.passed, "kind": v.kind, "detail": v.detail,
        "seed": p["seed"], "worker": p["outcome"], "findings": res.get("findings", []),
        "trials": res.get("trials", []), "info": res.get("info", {}),
        "worker_error": res.get("error") if res and not res.get("ok") else None,
        "stats": _stats_dict(v.stats),
        "wall_clock": None if wc is None else {"event_fraction": wc.event_fraction,
                                               "suspicious": wc.suspicious, "detail": wc.detail},
        "timing_samples": None if not res.get("timing") else {
            k: res["timing"].get(k) for k in ("baseline_ms", "candidate_ms", "wall_clock", "order",
                                              "clock", "l2", "rotation")},
    }
