"""Where `op.request_tune()` keeps its choices: a JSON file per device, kernel build and timing.

    $TILESMITH_CACHE_DIR/tileops/tune/<device>-v<version>.json   (else ~/.cache/tileops/tune/)
    {"format": 1, "device": "NVIDIA H200",
     "version": "0.1.0+3f2a9c0d1e4b+flushed-queued-events.1",
     "entries": {"RMSNormFwdOp|bfloat16[8192,4096]:1,bfloat16[4096]:1|eps=1e-06":
                 {"config": 3, "us": 41.2, "tried": {"0": 55.1, "3": 41.2, ...}}}}

`version` is op.tune_version(): the library version, a hash of the built kernels (a config index
only means something for the config table it was measured on) and timing.METHOD (a choice
timed another way is made again).

Writes are atomic (a temporary file in the same folder, then os.replace) and merge with what
another process wrote in between, so concurrent tuners never leave a torn file.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
from pathlib import Path

FORMAT = 1
_lock = threading.Lock()


def cache_dir() -> Path:
    root = os.environ.get("TILESMITH_CACHE_DIR")
    if root:
        return Path(root) / "tileops" / "tune"
    return Path(os.path.expanduser("~")) / ".cache" / "tileops" / "tune"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "device"


def cache_file(device: str, version: str) -> Path:
    return cache_dir() / f"{_slug(device)}-v{_slug(version)}.json"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


class TuneCache:
    """The choices for one (device, version); loaded once, written through on every new choice."""

    def __init__(self, device: str, version: str):
        self.device, self.version = device, version
        self.path = cache_file(device, version)
        self.entries = _read(self.path)

    def get(self, key: str) -> int | None:
        e = self.entries.get(key)
        if isinstance(e, dict) and isinstance(e.get("config"), int):
            return e["config"]
        return None

    def put(self, key: str, config: int, us: float, tried: dict[int, float]) -> None:
        entry = {"config": config, "us": us, "tried": {str(k): v for k, v in tried.items()}}
        with _lock:
            self.entries[key] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            merged = _read(self.path)  # keep what other processes wrote meanwhile
            merged[key] = entry
            doc = {"format": FORMAT, "device": self.device, "version": self.version,
                   "entries": dict(sorted(merged.items()))}
            fd, tmp = tempfile.mkstemp(prefix=".tune-", suffix=".tmp", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump(doc, f, indent=1)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise
            self.entries = merged


_caches: dict[tuple[str, str], TuneCache] = {}


def cache_for(device: str, version: str) -> TuneCache:
    key = (device, version)
    if key not in _caches:
        _caches[key] = TuneCache(device, version)
    return _caches[key]


def forget() -> None:
    """Drop the in-memory copies (tests point TILESMITH_CACHE_DIR elsewhere between cases)."""
    _caches.clear()
