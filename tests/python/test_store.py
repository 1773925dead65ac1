"""The store, process runner and paired statistics through the _tscore bindings."""
import math
import random

import pytest

import _tscore

KEY = "ab" * 32


def test_cache_root_resolution():
    assert _tscore.cache_root({"TILESMITH_CACHE_DIR": "/x/y", "HOME": "/h"}) == "/x/y"
    assert _tscore.cache_root({"HOME": "/h"}) == "/h/.cache/tilesmith"
    with pytest.raises(FileNotFoundError):
        _tscore.cache_root({})


def test_track_attempts_roll_and_profiles(tmp_path):
    root = str(tmp_path)
    run_id = _tscore.new_run_id()
    track = _tscore.Track(root, run_id, KEY)
    assert track.latest_attempt() is None
    for i in range(7):
        track.write_attempt(f"# attempt {i}\n")
    assert track.attempts() == [f"# attempt {i}\n" for i in range(2, 7)]
    assert track.latest_attempt() == "# attempt 6\n"
    path = track.write_profile("eval_0", '{"ratio": 0.91}')
    assert path.endswith("profiles/eval_0.json")
    with pytest.raises(ValueError):
        track.write_profile("eval_1", "{broken")
    with pytest.raises(ValueError):
        _tscore.Track(root, run_id, "not-a-key")
    runs = _tscore.list_runs(root)
    assert [r["run_id"] for r in runs] == [run_id] and runs[0]["tracks"] == 1
    assert _tscore.list_tracks(root, run_id) == [KEY]
    assert _tscore.clean_runs(root)["removed"] == [run_id]
    assert _tscore.list_runs(root) == []


def test_artifact_cache_verifies_on_read(tmp_path):
    cache = _tscore.ArtifactCache(str(tmp_path))
    h = cache.put({"candidate.py": b"def call(args): pass\n", "meta.json": b"{}"})
    assert _tscore.is_valid_cache_key(h)
    assert cache.get(h)["candidate.py"] == b"def call(args): pass\n"
    cache.set_index(KEY, h)
    assert cache.lookup(KEY) == h
    assert cache.lookup("cd" * 32) is None
    (tmp_path / "artifacts" / h / "candidate.py").write_bytes(b"import os\n")
    with pytest.raises(_tscore.StoreError, match="corrupt"):
        cache.get(h)
    with pytest.raises(FileNotFoundError):
        cache.get("0" * 64)


def test_sha256():
    assert _tscore.sha256_hex(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


def test_proc_run_deadline_and_errors():
    r = _tscore.proc_run(["/bin/sh", "-c", "cat; echo err >&2; exit 3"], stdin=b"hello")
    assert (r.exit_code, r.stdout, r.stderr, r.succeeded) == (3, b"hello", b"err\n", False)
    slow = _tscore.proc_run(["/bin/sh", "-c", "sleep 100"], timeout_s=0.2, kill_grace_s=0.2)
    assert slow.timed_out and slow.term_signal == 15 and slow.wall_s < 5
    with pytest.raises(FileNotFoundError):
        _tscore.proc_run(["/nonexistent/tool"])
    with pytest.raises(ValueError):
        _tscore.proc_run([])
    net = _tscore.proc_run(["/bin/true"], no_network=True)
    assert net.network in ("network_namespace", "proxy_env_scrubbed")


def test_paired_stats_and_verdict():
    rng = random.Random(1)
    base = [math.exp(rng.gauss(0, 0.02)) for _ in range(60)]
    cand = [0.9 * math.exp(rng.gauss(0, 0.02)) for _ in range(60)]
    s = _tscore.paired_stats(base, cand)
    assert abs(s.ratio - 0.9) < 0.02 and s.ratio_lower <= s.ratio <= s.ratio_upper
    v = _tscore.judge(s, min_improvement=0.02)
    assert v.accept and v.reason == "faster"
    same = _tscore.judge(_tscore.paired_stats(base, base))
    assert not same.accept and same.reason == "not_faster"
    few = _tscore.judge(_tscore.paired_stats(base[:5], cand[:5]))
    assert few.reason == "too_few_samples"
    with pytest.raises(ValueError):
        _tscore.paired_stats([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        _tscore.paired_stats([1.0], [float("nan")])
    assert _tscore.check_wall_clock(0.5, 10.0).suspicious
