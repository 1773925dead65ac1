"""Per-graph progress on stderr: one redrawn line on a terminal, plain log lines otherwise.

    tilesmith [graph 1 forward] evaluating attempt 2 ...
    tilesmith [graph 1 forward] rejected: incorrect (zeros: out[0] max abs err 3e-1 > 1e-2)
    tilesmith [graph 1 forward] installed: 1.31x (0.210 ms -> 0.160 ms)

TILESMITH_PROGRESS=0 silences it.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading


class Progress:
    def __init__(self, stream=None):
        self._stream = stream
        self._lock = threading.Lock()
        self._open_line = False

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    def enabled(self) -> bool:
        return os.environ.get("TILESMITH_PROGRESS", "1") != "0"

    def _tty(self) -> bool:
        try:
            return self.stream.isatty()
        except Exception:
            return False

    def update(self, label: str, text: str) -> None:
        """A transient state (agent turn, evaluation): redrawn in place on a terminal."""
        self._write(label, text, final=False)

    def event(self, label: str, text: str) -> None:
        """A lasting event (verdict, install, fallback): always its own line."""
        self._write(label, text, final=True)

    def _write(self, label: str, text: str, final: bool) -> None:
        if not self.enabled():
            return
        line = f"tilesmith [{label}] {text}"
        try:
            with self._lock:
                if self._tty():
                    width = max(20, shutil.get_terminal_size((100, 20)).columns - 1)
                    shown = line if len(line) <= width else line[: width - 3] + "..."
                    self.stream.write("\r\x1b[2K" + shown + ("\n" if final else ""))
                    self._open_line = not final
                else:
                    self.stream.write(line + "\n")
                self.stream.flush()
        except Exception:  # progress must never break the user's program
            pass


PROGRESS = Progress()
