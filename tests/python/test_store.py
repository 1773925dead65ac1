"""The store, process runner and paired statistics through the _core bindings."""
import math
import random

import pytest

from tilesmith import _core
KEY = "ab" * 32


def test_cache_root_resolution():
    assert _core.cache_root({"TILESMITH_CACHE_DIR": "/x/y", "HOME": "/h"}) == "/x/y"
    assert _core.cache_root({"HOME": "/h"}) == "/h/.cache/tilesmith"
    with pytest.raises(FileNotFoundError):
        _core.cache_root({})


def test_track_attempts_roll_and_profiles(tmp_path):
    root = str(tmp_path)
    run_id = _core.new_run_id()
    track = _core.Track(root, run_id, KEY)
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
        _core.Track(root, run_id, "not-a-key")
    runs = _core.list_runs(root)
    assert [r["run_id"] for r in runs] == [run_id] and runs[0]["tracks"] == 1
    assert _core.list_tracks(root, run_id) == [KEY]
    assert _core.clean_runs(root)["removed"] == [run_id]
    assert _core.list_runs(root) == []


def test_artifact_cache_verifies_on_read(tmp_path):
    cache = _core.ArtifactCache(str(tmp_path))
    h = cache.put({"candidate.py": b"def call(args): pass\n", "meta.json": b"{}"})
    assert _core.is_valid_cache_key(h)
    assert cache.get(h)["candidate.py"] == b"def call(args): pass\n"
    cache.set_index(KEY, h)
    assert cache.lookup(KEY) == h
    assert cache.lookup("cd" * 32) is None
    (tmp_path / "artifacts" / h / "candidate.py").write_bytes(b"import os\n")
    with pytest.raises(_core.StoreError, match="corrupt"):
        cache.get(h)
    with pytest.raises(FileNotFoundError):
        cache.get("0" * 64)


def test_sha256():
    assert _core.sha256_hex(b"abc") == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


def test_proc_run_deadline_and_errors():
    r = _core.proc_run(["/bin/sh", "-c", "cat; echo err >&2; exit 3"], stdin=b"hello")
    assert (r.exit_code, r.stdout, r.stderr, r.succeeded) == (3, b"hello", b"err\n", False)
    slow = _core.proc_run(["/bin/sh", "-c", "sleep 100"], timeout_s=0.2, kill_grace_s=0.2)
    assert slow.timed_out and slow.term_signal == 15 and slow.wall_s < 5
    with pytest.raises(FileNotFoundError):
        _core.proc_run(["/nonexistent/tool"])
    with pytest.raises(ValueError):
        _core.proc_run([])
    net = _core.proc_run(["/bin/true"], no_network=True)
    assert net.network in ("network_namespace", "proxy_env_scrubbed")


def test_paired_stats_and_verdict():
    rng = random.Random(1)
    base = [math.exp(rng.gauss(0, 0.02)) for _ in range(60)]
    cand = [0.9 * math.exp(rng.gauss(0, 0.02)) for _ in range(60)]
    s = _core.paired_stats(base, cand)
    assert abs(s.ratio - 0.9) < 0.02 and s.ratio_lower <= s.ratio <= s.ratio_upper
    v = _core.judge(s, min_improvement=0.02)
    assert v.accept and v.reason == "faster"
    same = _core.judge(_core.paired_stats(base, base))
    assert not same.accept and same.reason == "not_faster"
    few = _core.judge(_core.paired_stats(base[:5], cand[:5]))
    assert few.reason == "too_few_samples"
    with pytest.raises(ValueError):
        _core.paired_stats([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        _core.paired_stats([1.0], [float("nan")])
    assert _core.check_wall_clock(0.5, 10.0).suspicious


# ---- tilesmith clean removes only finished Tilesmith runs -----------------------------------------

def _finished_run(root) -> str:
    run_id = _core.new_run_id()
    _core.Track(str(root), run_id, KEY).write_attempt("# a\n")
    return run_id


def test_clean_never_follows_a_linked_runs_directory(tmp_path):
    elsewhere = tmp_path / "precious"
    (elsewhere / "experiment-1").mkdir(parents=True)
    (elsewhere / "experiment-1" / "data.bin").write_bytes(b"x")
    root = tmp_path / "cache"
    root.mkdir()
    (root / "runs").symlink_to(elsewhere)
    with pytest.raises(ValueError, match="symbolic link"):
        _core.clean_runs(str(root))
    assert (elsewhere / "experiment-1" / "data.bin").read_bytes() == b"x"


def test_clean_leaves_directories_that_are_not_tilesmith_runs(tmp_path):
    # TILESMITH_CACHE_DIR=. in a project whose runs/ is TensorBoard's.
    tb = tmp_path / "runs" / "Dec07_10-00-00_host"
    tb.mkdir(parents=True)
    (tb / "events.out.tfevents.1").write_bytes(b"tb")
    (tmp_path / "runs" / "20261207T100000.000000Z-1-deadbeef").mkdir()  # a run id, no marker
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "runs" / "link").symlink_to(target)
    ours = _finished_run(tmp_path)
    report = _core.clean_runs(str(tmp_path))
    assert report["removed"] == [ours]
    assert (tb / "events.out.tfevents.1").read_bytes() == b"tb"
    assert (tmp_path / "runs" / "20261207T100000.000000Z-1-deadbeef").is_dir()
    assert (tmp_path / "runs" / "link").is_symlink() and target.is_dir()
    assert sorted(report["not_ours"]) == [
        "20261207T100000.000000Z-1-deadbeef: no Tilesmith run marker",
        "Dec07_10-00-00_host: no Tilesmith run marker",
        "link: a symbolic link"]


def test_clean_keeps_a_live_run_and_dry_run_removes_nothing(tmp_path):
    done = _finished_run(tmp_path)
    live_id = _core.new_run_id()
    lease = _core.RunLease(str(tmp_path), live_id)
    track = _core.Track(str(tmp_path), live_id, KEY)
    track.write_attempt("# first\n")
    dry = _core.clean_runs(str(tmp_path), dry_run=True)
    assert dry["removed"] == [done] and dry["skipped_in_use"] == [live_id]
    assert len(_core.list_runs(str(tmp_path))) == 2  # nothing removed
    report = _core.clean_runs(str(tmp_path))
    assert report["removed"] == [done] and report["skipped_in_use"] == [live_id]
    track.write_attempt("# second\n")  # the live track still takes writes
    assert track.latest_attempt() == "# second\n"
    del lease
    assert _core.clean_runs(str(tmp_path))["removed"] == [live_id]


def test_clean_cli_dry_run_and_bad_days(tmp_path, monkeypatch, capsys):
    import io

    from tilesmith import cli

    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path))
    run = _finished_run(tmp_path)
    out = io.StringIO()
    assert cli.main(["clean", "--dry-run"], out=out) == 0
    assert f"would remove {run}" in out.getvalue()
    assert [r["run_id"] for r in _core.list_runs(str(tmp_path))] == [run]
    with pytest.raises(SystemExit) as e:
        cli.main(["clean", "--older-than", "-1"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "a number of days must be >= 0" in err[-1] and "Traceback" not in "".join(err)
