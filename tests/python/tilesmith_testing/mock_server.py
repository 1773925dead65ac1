"""Starts the `mock_openai_server` executable (tests/cpp/agent) with a script (test-only)."""

import json
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[3]


def executable() -> str | None:
    candidates = [os.environ.get("TS_MOCK_OPENAI_SERVER", "")]
    candidates += [str(p) for p in sorted(REPO.glob("build*/**/mock_openai_server"))]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


class MockServer:
    """with MockServer(script, tmp_path) as base_url: ..."""

    def __init__(self, script: list, directory):
        self.script_path = pathlib.Path(directory) / f"script_{os.getpid()}_{id(self)}.json"
        self.script_path.write_text(json.dumps(script))
        self.proc = None

    def __enter__(self) -> str:
        exe = executable()
        if exe is None:
            raise RuntimeError("mock_openai_server is not built (cmake --build build/cpp "
                               "--target mock_openai_server) and TS_MOCK_OPENAI_SERVER is unset")
        self.proc = subprocess.Popen([exe, str(self.script_path)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        port = self.proc.stdout.readline().strip()
        if not port.isdigit():
            self.proc.kill()
            raise RuntimeError(f"mock_openai_server did not start: {self.proc.stderr.read()}")
        return f"http://127.0.0.1:{port}/v1"

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
