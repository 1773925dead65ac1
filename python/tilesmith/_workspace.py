"""The agent's workspace for one graph: the run track (rolling attempts, profiles) and the gate.

The Python side of ts::agent::Workspace (core/include/ts/agent/workspace.hpp): original(), write_candidate(), evaluate(),
profile(), list_specs(), read_spec(), track_dir(). Exceptions raised here reach the model as tool
errors (the binding turns them into text); they never reach the user's program.
"""

from __future__ import annotations

import time

from . import _identity


class TrackWorkspace:
    def __init__(self, track, gate, original_text: str, header: str, label: str, progress,
                 on_report=None, deadline: float | None = None):
        self._track = track
        self._gate = gate
        self._original = original_text
        self._header = header
        self._label = label
        self._progress = progress
        self._on_report = on_report
        self._deadline = deadline  # time.monotonic() past which no evaluation runs
        self._winner = None  # the last accepted candidate: the next loop's baseline
        self.evaluations = 0
        self.written = 0
        self.tried: list[dict] = []  # per evaluation: rewrite kinds, verdict, speedup, reason

    # -- the interface ---------------------------------------------------------------------------
    def original(self) -> str:
        return self._original

    def track_dir(self) -> str:
        return self._track.dir

    def write_candidate(self, text: str) -> None:
        # Every attempt file starts with the FX program as comments, then the wrapper.
        self._track.write_attempt(_identity.with_header(self._header, text))
        self.written += 1
        self._progress.update(self._label, f"agent wrote attempt {self.written}")

    def _bounded(self, run):
        """Runs a gate call with each worker job's deadline cut to the time budget left."""
        if self._deadline is None:
            return run()
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the time budget is spent; nothing more is evaluated")
        options = self._gate.options
        saved = options.timeout_s
        options.timeout_s = min(saved, left)
        try:
            return run()
        finally:
            options.timeout_s = saved

    def evaluate(self, text: str) -> dict:
        # An acceptance ends its loop, so an evaluation after one belongs to the next loop, whose
        # candidates must beat the winner (what is installed), not Inductor's original.
        if self._winner is not None and hasattr(self._gate, "rebase"):
            self._gate.rebase(self._winner)
            self._winner = None
        self.evaluations += 1
        n = self.evaluations
        self._progress.update(self._label, f"evaluating candidate {n} ...")
        report = self._bounded(lambda: self._gate.evaluate(
            _identity.with_header(self._header, text), label=f"candidate_{n:02d}"))
        d = report.to_dict() if hasattr(report, "to_dict") else dict(report)
        if self._on_report is not None:
            self._on_report(d)
        verdict = d.get("verdict", "?")
        reason = d.get("reason", "")
        from ._install import rewrite_kinds

        self.tried.append({"rewrites": rewrite_kinds(text), "verdict": verdict,
                           "speedup": d.get("speedup"), "reason": reason})
        if verdict == "accepted":
            self._winner = _identity.with_header(self._header, text)
        self._progress.event(self._label, f"candidate {n}: {reason or verdict}")
        return d

    def profile(self, text: str) -> list:
        return list(self._bounded(lambda: self._gate.profile(
            _identity.with_header(self._header, text))))

    def list_specs(self) -> list:
        """The TileOPs ops a candidate may call (`import tileops`), by name."""
        from tileops import manifest

        return [op.name for op in manifest.load().ops if op.status == "implemented"]

    def read_spec(self, name: str) -> str:
        """One op's spec entry as written (YAML), then its signature and roofline report."""
        from tileops import _core, manifest

        op = manifest.load().find(name)
        if op is None:
            raise KeyError(f"no TileOPs spec named {name!r} (list_specs names them)")
        lines = open(op.file, encoding="utf-8").read().splitlines()
        start = op.line - 1
        end = next((i for i in range(start + 1, len(lines))
                    if lines[i] and not lines[i][0].isspace() and not lines[i].startswith("#")),
                   len(lines))
        entry = "\n".join(lines[start:end]).rstrip()
        return f"{entry}\n\n{_core.format_op_report(op, 'h100')}"
