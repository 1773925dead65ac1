"""Both command lines on bad input: one located line on stderr and a non-zero exit, never a
traceback; and malformed run files shown as malformed, not crashed on."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilesmith import _core
SPECS = Path(__file__).resolve().parents[2] / "specs"
RUN = "20261207T100000.000000Z-1-abcdef01"
KEY = "ab" * 32


def _cli(module, *args, env=None):
    r = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                       env={**os.environ, **(env or {})}, timeout=120)
    return r.returncode, r.stdout, r.stderr


def _assert_one_located_error(rc, err, where):
    assert rc != 0
    assert "Traceback" not in err, err
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert lines and where in lines[-1], err


def test_tileops_on_a_spec_that_is_not_utf8(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"Fo\xffo:\n  doc: x\n")
    for command in ("list", "validate"):
        rc, _, err = _cli("tileops.cli", "--specs", str(bad), command)
        assert rc == 1 and "Traceback" not in err, err
        assert f"{bad}:1:3: not valid UTF-8" in err


def test_tileops_show_fails_on_a_workload_that_does_not_bind_and_names_its_line(tmp_path):
    text = (SPECS / "rope.yaml").read_text()
    assert "Hk: 8, D: 128, P: 8192, R: 128, dtype_cases: [{T: bfloat16}], label: llama3-8b-decode" in text
    broken = text.replace("{S: 16, Hq: 32, Hk: 8,", "{S: 16, Hq: 32, Hk: 5,")
    spec = tmp_path / "rope.yaml"
    spec.write_text(broken)
    line = next(i for i, ln in enumerate(broken.splitlines(), 1) if "Hk: 5" in ln)
    rc, out, err = _cli("tileops.cli", "--specs", str(spec), "show", "RoPENeoXFwdOp")
    _assert_one_located_error(rc, err, f"{spec}:{line}:")
    assert "llama3-8b-prefill" in out  # the rows that bind are still shown
    rc, _, err = _cli("tileops.cli", "--specs", str(spec), "validate")
    assert rc == 1 and f"{spec}:{line}:" in err and "Hq % Hk == 0" in err


@pytest.mark.parametrize("args,where", [
    (["clean", "--older-than", "-1"], "--older-than"),
    (["clean", "--older-than", "soon"], "--older-than"),
    (["bench", "--part", "abc"], "--part"),
    (["bench", "--part", "3/2"], "--part"),
])
def test_tilesmith_bad_arguments(args, where, tmp_path):
    rc, _, err = _cli("tilesmith.cli", *args, env={"TILESMITH_CACHE_DIR": str(tmp_path)})
    assert rc == 2
    _assert_one_located_error(rc, err, where)


def test_tilesmith_show_on_malformed_track_files(tmp_path):
    track = Path(_core.Track(str(tmp_path), RUN, KEY).dir)
    _core.Track(str(tmp_path), RUN, KEY).write_attempt("x = 1\n")
    (track / "track.json").write_text("[1, 2]")
    (track / "profiles" / "000_x.json").write_text('{"verdict": 3, "speedup": "fast"}')
    (track / "profiles" / "001_y.json").write_text("{broken")
    (track / "cache.json").write_text('{"artifact": "a", "check": "not an object"}')
    env = {"TILESMITH_CACHE_DIR": str(tmp_path)}
    rc, out, err = _cli("tilesmith.cli", "show", RUN[:8], env=env)
    assert rc == 0 and "Traceback" not in err, err
    assert KEY in out and "verdicts: 3, ?" in out
    rc, out, err = _cli("tilesmith.cli", "show", RUN[:8], KEY[:6], env=env)
    assert rc == 0 and "Traceback" not in err, err
    assert "track.json: unreadable" in out and "artifact-cache hit: a" in out
    (track / "track.json").write_text(json.dumps({"benchmark": {"speedup": "x"}}))
    rc, out, err = _cli("tilesmith.cli", "show", RUN[:8], KEY[:6], env=env)
    assert rc == 0 and "malformed benchmark entry" in out, err
