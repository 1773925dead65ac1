"""One tilesmith.compile call: its backend, the graphs it saw, and their optimization.

    backend(gm, example_inputs, mode=, options=)          # Dynamo: once per captured graph
      └─ compile_fx(..., inner_compile=inner)             # under enable_autograd_cache=False
           └─ inner(gm2, ex2, **fx_kwargs)                # fwd / inference now, bwd at .backward()
                out = compile_fx_inner(...)               # FX + code caches stay on
                eligibility -> GraphState, one-shot shim on out.current_callable

At the first real call the shim copies the concrete arguments, runs the ORIGINAL for the user's own
call, then optimizes on the copies: cache key, track, artifact-cache lookup (re-checked by the
gate), else the agent with the gate; a confirmed winner replaces current_callable. Any failure on
this path keeps plain Inductor and records why; nothing raises into the user's program.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
import traceback

import torch

from . import _eligibility, _identity, _insitu, _install, _memory
from ._progress import PROGRESS

VERSION = "0.1.0"


@dataclasses.dataclass(frozen=True)
class GraphDiagnostic:
    """One graph Inductor produced under a tilesmith.compile call."""

    index: int  # order seen in this run, from 1
    dynamo_graph: int  # which Dynamo graph (graph breaks and recompiles get new numbers)
    kind: str  # "forward" | "backward" | "inference"
    eligible: bool
    reason: str  # why not eligible, or "eligible"
    status: str  # "waiting for first call" | "installed" | "cache hit" | "kept Inductor: ..."
    cache_key: str | None  # known after the first call
    track_dir: str | None
    notes: tuple = ()  # what the optimization could not use and why (sandbox, tools)
    # Each candidate the gate judged: {"rewrites", "verdict", "speedup", "reason"}, in order.
    tried: tuple = ()

    def __getitem__(self, key):
        return getattr(self, key)


@dataclasses.dataclass(frozen=True)
class Benchmark:
    """One optimized graph: Inductor's time and Tilesmith's, from the gate's paired timing."""

    graph: int
    kind: str
    cache_key: str
    torch_inductor_ms: float
    tilesmith_ms: float
    speedup: float
    source: str  # "agent" (measured in this run) | "artifact_cache" (measured when accepted) |
    #              "same_graph" (an identical graph earlier in this run)
    in_place_speedup: float | None = None  # from the in-place check once it has decided
    rewrites: tuple = ()  # kinds of rewrite in the installed text (_install.rewrite_kinds)

    def __getitem__(self, key):
        return getattr(self, key)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _reason_of(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class GraphState:
    def __init__(self, session, index, dynamo_graph, kind, cg, fx_text, fx_kwargs, eligible,
                 reasons, device, donated):
        self.session = session
        self.index = index
        self.dynamo_graph = dynamo_graph
        self.kind = kind
        self.cg = cg
        self.fx_text = fx_text
        self.fx_kwargs = fx_kwargs
        self.eligible = eligible
        self.reason = "eligible" if eligible else "; ".join(reasons)
        self.device = device
        self.donated = list(donated or [])
        self.static_input_idxs = list(fx_kwargs.get("static_input_idxs") or [])
        self.status = "waiting for first call" if eligible else "ineligible"
        self.cache_key = None
        self.track_dir = None
        self.original = None
        self.installed_module = None
        self.installed_text = self.installed_path = None
        self.installed_report = None
        self._check = None  # the InPlaceCheck while it runs
        self.notes: list[str] = []
        self.tried: list[dict] = []
        self._fired = False
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return f"graph {self.dynamo_graph} {self.kind}"

    def diagnostic(self) -> GraphDiagnostic:
        return GraphDiagnostic(self.index, self.dynamo_graph, self.kind, self.eligible,
                               self.reason, self.status, self.cache_key, self.track_dir,
                               tuple(self.notes), tuple(self.tried))

    # -- the one-shot shim ---------------------------------------------------------------------
    def arm(self) -> None:
        self.original = self.cg.current_callable
        state = self

        def tilesmith_first_call(args):
            with state._lock:
                first = not state._fired
                state._fired = True
            if not first:  # a concurrent first call: just run whatever is installed now
                return state.cg.current_callable(args)
            copies = None
            try:
                copies, note = _memory.clone_args(args)
                if note:
                    state.notes.append(note)
            except Exception as e:
                state._keep(f"the arguments could not be copied ({_reason_of(e)})")
            state.cg.current_callable = state.original
            result = state.original(args)  # the user's own call runs on Inductor's code
            if copies is not None:
                box = [copies]
                del copies  # the box holds the only reference: the gate's snapshot frees it
                state._optimize_safely(box)
            return result

        tilesmith_first_call._tilesmith_state = self
        self.cg.current_callable = tilesmith_first_call

    # -- outcomes ------------------------------------------------------------------------------
    def _keep(self, why: str) -> None:
        self.status = f"kept Inductor: {why}"
        PROGRESS.event(self.label, f"kept Inductor: {why}")
        self._write_track_summary()

    def _rollback(self, exc: BaseException):
        self.cg.current_callable = self.original
        if self._check is not None:
            self._check.abandon(self.original)
        self.status = f"rolled back: the installed candidate raised {_reason_of(exc)}"
        PROGRESS.event(self.label, self.status)
        self._write_track_summary()
        return self.original

    def _in_place_verdict(self, stats, installed) -> None:
        """InPlaceCheck's decision: keep the candidate unless, timed in this program, it was not
        faster than the original (median paired ratio >= 1)."""
        self._check = None
        bench = self.session.benchmark_of(self.index)
        base = self.status.split(";")[0]
        if stats is None:
            self.cg.current_callable = installed
            self.status = f"{base} (in-place check not timed: every call was under graph capture)"
        elif stats.ratio < 1.0:
            self.cg.current_callable = installed
            self.status = f"{base}; in place {1.0 / stats.ratio:.2f}x over {stats.n} paired calls"
            if bench is not None:
                self.session.add_benchmark(dataclasses.replace(bench, in_place_speedup=1.0 / stats.ratio))
        else:
            self.cg.current_callable = self.original
            self.installed_module = None  # an identical graph later in this run keeps Inductor too
            self.status = (f"rolled back: slower in place ({stats.candidate_median_ms:.4f} ms vs "
                           f"Inductor {stats.baseline_median_ms:.4f} ms, ratio {stats.ratio:.3f} "
                           f"over {stats.n} paired calls) though the gate confirmed it")
            self.session.remove_benchmark(self.index)
        PROGRESS.event(self.label, self.status)
        self._write_track_summary()

    def _write_track_summary(self) -> None:
        if not self.track_dir:
            return
        try:
            from tilesmith import _core
            doc = {"graph": self.index, "dynamo_graph": self.dynamo_graph, "kind": self.kind,
                   "cache_key": self.cache_key, "run_id": self.session.run_id,
                   "status": self.status, "reason": self.reason}
            bench = self.session.benchmark_of(self.index)
            if bench is not None:
                doc["benchmark"] = bench.as_dict()
            _core.write_file_atomic(os.path.join(self.track_dir, "track.json"),
                                      json.dumps(doc, indent=2).encode())
        except Exception:
            pass

    # -- optimization --------------------------------------------------------------------------
    def _optimize_safely(self, box: list) -> None:
        devices = []
        if self.device == "cuda" and torch.cuda.is_available():
            devices = [torch.cuda.current_device()]
        try:
            with torch.random.fork_rng(devices=devices):  # the user's RNG stream stays untouched
                with torch.no_grad():
                    self._optimize(box)
        except KeyboardInterrupt:
            # Ctrl-C: the optimization ends here, the graph stays on Inductor's code (installed
            # before optimizing began), and the interrupt goes on to the program.
            self._keep("interrupted (Ctrl-C) while optimizing")
            raise
        except Exception as e:
            detail = traceback.format_exc(limit=-3).strip().splitlines()[-1]
            self._keep(f"internal error on the optimization path ({_reason_of(e)}; {detail})")

    def _optimize(self, box: list) -> None:
        from tilesmith import _core
        self._started = time.monotonic()  # the time budget counts from here
        copies = box.pop()

        s = self.session
        header = _identity.fx_header(self.fx_text, self.kind, self.label)
        wrapper = _identity.normalize_wrapper(self.cg.source_code)
        original_text = header + wrapper
        self.cache_key = _identity.cache_key(
            fx_graph_cache_key=getattr(self.cg, "_fx_graph_cache_key", None),
            normalized_source=wrapper, fx_text=self.fx_text, kind=self.kind, args=copies,
            device=self.device, settings=s.key_settings())
        key = self.cache_key

        track = _core.Track(s.root, s.run_id, key)
        self.track_dir = track.dir
        fresh = track.latest_attempt() is None
        if fresh:
            track.write_attempt(original_text)
        self.status = "optimizing"
        self._write_track_summary()

        earlier = s.outcome_by_key.get(key)
        if earlier is not None and earlier is not self:  # the same graph again in this run
            if earlier.installed_module is not None:
                self._install_text(earlier.installed_text, earlier.installed_path,
                                   earlier.installed_report, "same_graph")
                return
            self._keep(f"the identical graph {earlier.label} kept Inductor ({earlier.status})")
            return
        s.outcome_by_key[key] = self

        try:
            from tilesmith.gate import Gate, GateOptions, GateUnavailable
        except Exception as e:
            self._keep(f"the gate is unavailable ({_reason_of(e)})")
            return
        # The built-in search agent's candidates are the host's own rewrites: they may run
        # unsandboxed where no sandbox works. A model's never do.
        builtin = (s.agent_model or os.environ.get("TILESMITH_MODEL")) == "tilesmith-search"
        options = GateOptions(device=self.device, static_input_idxs=self.static_input_idxs,
                              sandbox="preferred" if builtin else "required")
        try:
            gate = Gate(original_text, copies, track.dir, options)
        except GateUnavailable as e:
            self._keep(f"the gate cannot evaluate here: {e}")
            return
        del copies  # the gate keeps its own copies
        self.notes.append(f"gate: {gate.sandbox_note}")
        try:
            self._run_with_gate(gate, track, key, header, original_text)
        finally:
            close = getattr(gate, "close", None)  # stops the gate's workers
            if close is not None:
                try:
                    close()
                except Exception:
                    pass

    def _run_with_gate(self, gate, track, key, header, original_text) -> None:
        from tilesmith import _core
        s = self.session
        if self._try_artifact_cache(gate, track, key):
            return

        PROGRESS.update(self.label, "agent turn ...")
        from tilesmith._core import agent

        from ._workspace import TrackWorkspace

        budget_s = s.patience.get("time_budget_s")
        left = None if budget_s is None else budget_s - (time.monotonic() - self._started)
        if left is not None and left <= 0:
            self._keep(f"the time budget of {budget_s:g} s was spent before the agent started")
            return
        deadline = None if left is None else time.monotonic() + left
        workspace = TrackWorkspace(track, gate, original_text, header, self.label, PROGRESS,
                                   deadline=deadline)
        task = (f"Make this TorchInductor {self.kind} graph ({self.label}, device "
                f"{self.device}) faster. The file is the generated wrapper module; its call(args) "
                f"must keep the same ABI, outputs, aliasing and RNG draws.")
        from . import _sandbox

        result = agent.run(workspace, s.budget, model=s.agent_model, loops=s.loops,
                           agency=s.agency, task=task,
                           traces=os.environ.get("TILESMITH_DEBUG") == "1",
                           seed=int(os.environ.get("TILESMITH_SEED", "0") or 0),
                           shell_readable=_sandbox.python_paths(),
                           shell_hidden=[str(s.root)], time_budget_s=left,
                           model_timeout_s=s.patience.get("model_timeout_s"),
                           model_attempts=s.patience.get("model_attempts"))
        self.notes.extend(result.get("notes") or [])
        self.tried.extend(workspace.tried)
        s.record_agent(self.index, result)
        # A run can end `failed` or `budget_spent` after some loops were accepted (loops >= 2, the
        # search agent running out of rewrites): the last accepted candidate still installs.
        if not result.get("accepted"):
            # A Ctrl-C raised out of agent.run; a run that ends `stopped` spent its time budget.
            if result.get("outcome") == "stopped":
                self._keep(f"no candidate accepted: {result.get('reason')} "
                           f"(max_optimization_s={budget_s:g})")
            elif result.get("outcome") == "failed":  # the reason says what happened
                self._keep(f"no candidate accepted: {result.get('reason')}")
            else:
                self._keep(f"no candidate accepted ({result.get('outcome')}: "
                           f"{result.get('reason')})")
            return
        winner = result["accepted"][-1]
        report = winner.get("report") or {}
        if report.get("verdict") != "accepted" or report.get("confirmed") is False:
            self._keep(f"the accepted candidate is not confirmed ({report.get('reason')})")
            return
        text = _identity.with_header(header, winner["text"])
        meta = {"cache_key": key, "kind": self.kind, "run_id": s.run_id,
                "accepted_unix_s": time.time(), "report": report}
        cache = _core.ArtifactCache(s.root)
        artifact = cache.put({"candidate.py": text.encode(),
                              "meta.json": json.dumps(meta, indent=2, default=str).encode()})
        path = os.path.join(cache.dir, artifact, "candidate.py")
        if self._install_text(text, path, report, "agent"):
            cache.set_index(key, artifact)

    def _set_aside(self, cache, key, why: str) -> None:
        """A corrupt cache entry: said in diagnostics() and moved aside, so it is not read again."""
        try:
            where = cache.quarantine(key, why)
            note = f"{why}; moved to {where}; optimizing afresh"
        except Exception as e:
            note = f"{why}; it could not be moved aside ({_reason_of(e)}); optimizing afresh"
        self.notes.append(note)
        PROGRESS.event(self.label, note)

    def _try_artifact_cache(self, gate, track, key) -> bool:
        from tilesmith import _core
        cache = _core.ArtifactCache(self.session.root)
        try:
            artifact = cache.lookup(key)
            if artifact is None:
                return False
            files = cache.get(artifact)
            text = files["candidate.py"].decode()
            meta = json.loads(files["meta.json"].decode()) if "meta.json" in files else {}
        except Exception as e:
            self._set_aside(cache, key, f"artifact-cache entry unusable ({_reason_of(e)})")
            return False
        PROGRESS.update(self.label, f"artifact-cache hit {artifact[:12]}: re-checking ...")
        check = gate.check(text)
        check_d = check.to_dict() if hasattr(check, "to_dict") else dict(check)
        hit = {"artifact": artifact, "cache_key": key, "run_id": self.session.run_id,
               "accepted_in_run": meta.get("run_id"), "check": check_d}
        if check_d.get("verdict") != "accepted":
            hit["installed"] = False
            track.write_cache_hit(json.dumps(hit, default=str))
            PROGRESS.event(self.label, f"cached candidate failed its re-check "
                                       f"({check_d.get('reason')}); optimizing afresh")
            return False
        path = os.path.join(cache.dir, artifact, "candidate.py")
        installed = self._install_text(text, path, meta.get("report") or {}, "artifact_cache")
        hit["installed"] = installed
        track.write_cache_hit(json.dumps(hit, default=str))
        self._write_track_summary()
        return True

    def _install_text(self, text, path, report, source) -> bool:
        try:
            mod = _install.load_module(text, path, _install.constants_of(self.cg))
        except Exception as e:
            self._keep(f"the confirmed candidate did not load in this process ({_reason_of(e)})")
            return False
        self.installed_module = mod
        self.installed_text, self.installed_path, self.installed_report = text, path, report
        installed = _install.installed_callable(mod, self.cg, self._rollback,
                                                rerun_safe=not self.donated)
        pairs = _insitu.pairs_from_env(self.device)
        if pairs > 0:
            self._check = _insitu.InPlaceCheck(
                self.original, installed, self.device, pairs,
                lambda stats: self._in_place_verdict(stats, installed))
            self.cg.current_callable = self._check
        else:
            self.cg.current_callable = installed
        timing = report.get("timing") or {}
        bench = Benchmark(graph=self.index, kind=self.kind, cache_key=self.cache_key,
                          torch_inductor_ms=float(timing.get("original_ms") or 0.0),
                          tilesmith_ms=float(timing.get("candidate_ms") or 0.0),
                          speedup=float(report.get("speedup") or 0.0), source=source,
                          rewrites=_install.rewrite_kinds(text))
        self.session.add_benchmark(bench)
        self.status = {"agent": "installed", "artifact_cache": "installed from the artifact cache",
                       "same_graph": "installed (identical to an earlier graph of this run)"}[source]
        if pairs > 0:
            self.status += f"; checking in place over its next {2 * (pairs + _insitu.WARMUP_PAIRS)} calls"
        PROGRESS.event(self.label, f"{self.status}: {bench.speedup:.2f}x "
                                   f"({bench.torch_inductor_ms:.4f} ms -> {bench.tilesmith_ms:.4f} ms)")
        self._write_track_summary()
        return True


class Session:
    """State of one tilesmith.compile call."""

    def __init__(self, *, run_id, root, agent_model, agency, loops, max_model_calls, dynamic,
                 fallback_reason=None, patience=None):
        self.run_id = run_id
        self.patience = dict(patience or {})  # time_budget_s, model_timeout_s, model_attempts
        self.root = root
        self.agent_model = agent_model
        self.agency = agency
        self.loops = loops
        self.max_model_calls = max_model_calls
        self.dynamic = dynamic
        self.fallback_reason = fallback_reason
        self.graphs: list[GraphState] = []
        self.benchmarks: list[Benchmark] = []
        self.outcome_by_key: dict[str, GraphState] = {}
        self.agent_runs: list[dict] = []
        self.dynamo_graphs = 0
        self._lock = threading.Lock()
        self.budget = None
        self.lease = None  # marks the run live for `tilesmith clean` while this object exists
        if fallback_reason is None:
            from tilesmith import _core
            from tilesmith._core import agent

            self.budget = agent.Budget(max_model_calls)
            if root is not None and run_id is not None:
                try:
                    self.lease = _core.RunLease(root, run_id)
                except OSError:
                    pass  # the cache root is not writable: its tracks fail loudly later

    def key_settings(self) -> dict:
        return {"version": VERSION, "agent_model": self.agent_model or os.environ.get("TILESMITH_MODEL"),
                "agency": self.agency, "loops": self.loops,
                "min_improvement": os.environ.get("TILESMITH_MIN_IMPROVEMENT", "default")}

    def benchmark_of(self, index):
        for b in self.benchmarks:
            if b.graph == index:
                return b
        return None

    def add_benchmark(self, bench: Benchmark) -> None:
        with self._lock:
            self.benchmarks = [b for b in self.benchmarks if b.graph != bench.graph] + [bench]

    def remove_benchmark(self, graph: int) -> None:
        with self._lock:
            self.benchmarks = [b for b in self.benchmarks if b.graph != graph]

    def record_agent(self, index, result) -> None:
        with self._lock:
            self.agent_runs.append({"graph": index, "outcome": result.get("outcome"),
                                    "model_calls": result.get("model_calls"),
                                    "reason": result.get("reason")})

    def next_dynamo_graph(self) -> int:
        with self._lock:
            self.dynamo_graphs += 1
            return self.dynamo_graphs

    def observe(self, dynamo_graph, gm, ex, fx_kwargs, out) -> None:
        kind = ("backward" if fx_kwargs.get("is_backward")
                else "inference" if fx_kwargs.get("is_inference") else "forward")
        try:
            eligible, reasons, device = _eligibility.check(
                out, gm, ex, fx_kwargs, allow_cpu=_eligibility.cpu_admitted())
        except Exception as e:
            eligible, reasons, device = False, [f"eligibility check failed ({_reason_of(e)})"], ""
        donated = None
        if kind == "backward":
            try:
                from torch._inductor.utils import get_donated_idxs

                donated = get_donated_idxs()
            except Exception:
                donated = None
        fx_text = getattr(out, "inductor_post_grad_graph_str", None)
        if not fx_text and gm is not None:
            try:
                fx_text = gm.print_readable(print_output=False, include_stride=True,
                                            include_device=True)
            except Exception:
                fx_text = None
        with self._lock:
            index = len(self.graphs) + 1
            state = GraphState(self, index, dynamo_graph, kind, out, fx_text, dict(fx_kwargs),
                               eligible, reasons, device, donated)
            self.graphs.append(state)
        if eligible:
            state.arm()
        else:
            PROGRESS.event(state.label, f"stays on Inductor: {state.reason}")


class TilesmithBackend:
    """The torch.compile backend: compile_fx with Tilesmith's inner-compile hook."""

    def __init__(self, session: Session):
        self.session = session
        self.__name__ = "tilesmith"

    def __call__(self, gm, example_inputs, mode=None, options=None):
        from torch._inductor.compile_fx import compile_fx, compile_fx_inner

        # The same validation and mode table torch.compile applies for backend="inductor".
        patches = torch._TorchCompileInductorWrapper(mode, options, self.session.dynamic).config
        session = self.session
        dynamo_graph = session.next_dynamo_graph()

        def tilesmith_inner_compile(gm2, ex2, **fx_kwargs):
            out = compile_fx_inner(gm2, ex2, **fx_kwargs)
            try:
                session.observe(dynamo_graph, gm2, ex2, fx_kwargs, out)
            except Exception as e:  # observation must never break compilation
                PROGRESS.event(f"graph {dynamo_graph}", f"not observed ({_reason_of(e)})")
            return out

        # An AOTAutograd-cache hit would skip every inner compile (and with it this hook); the FX graph
        # cache inside compile_fx_inner stays on, so warm starts stay cheap.
        with torch._functorch.config.patch(enable_autograd_cache=False):
            return compile_fx(gm, example_inputs, inner_compile=tilesmith_inner_compile,
                              config_patches=patches)

    def reset(self):
        from torch._inductor import config

        if config.triton.cudagraphs:
            from torch._inductor.cudagraph_trees import reset_cudagraph_trees

            reset_cudagraph_trees()
