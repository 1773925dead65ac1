"""The gate's worker sandbox: candidate code that hunts for the user's secrets, or tries to change
the gate, another track or the host, gets nothing out and changes nothing; what it quotes in its
exception is redacted in the report, the profile and everything the model sees."""

import json
import os
import shutil
from pathlib import Path

import pytest

from tilesmith import _core
from gate_corpus import base_args, base_source
from tilesmith import _sandbox
from tilesmith.gate import Gate, GateIntegrityError, GateOptions, GateUnavailable
from tilesmith.gate import host as gate_host

API_KEY = "sk-test-gate-DO-NOT-LEAK-9b1e77c2"
LOGIN_TOKEN = "eyJ-gate-login-token-DO-NOT-LEAK-31f0"


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A user with an API key in the environment, a model login in their home, and a run cache
    holding another track."""
    home = tmp_path / "home"
    (home / ".cli-proxy-api").mkdir(parents=True)
    (home / ".cli-proxy-api" / "codex-me.json").write_text(
        json.dumps({"type": "codex", "refresh_token": LOGIN_TOKEN}))
    cache = tmp_path / "cache"
    other = cache / "runs" / "r0" / "k0"
    other.mkdir(parents=True)
    (other / "cache.json").write_text('{"ok": true}')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(cache))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    return {"home": home, "cache": cache, "other": other, "track": cache / "runs" / "r1" / "k1"}


def _hunter(user, writes: bool = True) -> str:
    """A candidate that gathers whatever it can read and writes wherever it can, then raises it
    all in its exception message (the channel to the model, the profile and stderr). Without
    `writes` it only reads (an unsandboxed run would really change the installed package)."""
    targets = [user["other"] / "cache.json", Path(_sandbox.__file__), Path(gate_host.__file__)]
    return f'''
import glob, os
def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read(4000).decode(errors="replace")
    except Exception as e:
        return type(e).__name__
def _write(path):
    try:
        with open(path, "a") as f:
            f.write("forged")
        return "WROTE " + path
    except Exception as e:
        return type(e).__name__
def call(args):
    found = [_read({str(user["home"] / ".cli-proxy-api" / "codex-me.json")!r})]
    found += [_read(p) for p in glob.glob(os.path.expanduser("~/.cli-proxy-api/*"))]
    found.append(" ".join(f"{{k}}={{v}}" for k, v in os.environ.items()))
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            found.append(_read(f"/proc/{{pid}}/environ"))
    found += [_write(p) for p in {[str(t) for t in targets] if writes else []!r}]
    raise RuntimeError("LOOT " + " | ".join(found))
'''


def _all_text(root: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def test_a_candidate_reads_no_secret_and_writes_nothing_outside_its_job(user):
    sandbox_source = Path(_sandbox.__file__).read_text()
    with Gate(base_source(), base_args(), user["track"], GateOptions(device="cpu", timeout_s=120)) as g:
        assert g.sandbox_note.startswith("candidates run sandboxed")
        r = g.evaluate(_hunter(user), label="hunter")
    assert r.verdict == "rejected" and r.kind == "exception", r.reason
    text = json.dumps(r.to_dict(), default=str)
    assert "LOOT" in text  # the candidate ran and reported
    assert API_KEY not in text and LOGIN_TOKEN not in text
    assert "WROTE" not in text
    assert (user["other"] / "cache.json").read_text() == '{"ok": true}'
    assert Path(_sandbox.__file__).read_text() == sandbox_source
    profiles = _all_text(user["track"])
    assert API_KEY not in profiles and LOGIN_TOKEN not in profiles
    assert r.details["sandbox"] == g.sandbox_note


def test_unsandboxed_secrets_are_still_redacted(user, monkeypatch):
    """Without the sandbox (the built-in search agent where bwrap is missing) a candidate can
    read the login file; the report, the profile and the model never show what it read."""
    monkeypatch.setenv("TILESMITH_BWRAP", "/nonexistent/bwrap")
    with pytest.raises(GateUnavailable, match="bwrap"):
        Gate(base_source(), base_args(), user["track"], GateOptions(device="cpu"))
    opts = GateOptions(device="cpu", timeout_s=120, sandbox="preferred")
    with Gate(base_source(), base_args(), user["track"], opts) as g:
        assert "without a sandbox" in g.sandbox_note and "bwrap" in g.sandbox_note
        r = g.evaluate(_hunter(user, writes=False), label="hunter")
    text = json.dumps(r.to_dict(), default=str)
    assert "LOOT" in text and "[redacted]" in text  # it read the login file ...
    assert API_KEY not in text and LOGIN_TOKEN not in text  # ... and nobody sees it
    profiles = _all_text(user["track"])
    assert LOGIN_TOKEN not in profiles and API_KEY not in profiles


def test_a_changed_gate_refuses_to_evaluate(user, tmp_path, monkeypatch):
    with Gate(base_source(), base_args(), user["track"], GateOptions(device="cpu", timeout_s=120)) as g:
        monkeypatch.setattr(gate_host, "_GATE_CODE_SHA256", "0" * 64)  # as if the files changed
        with pytest.raises(GateIntegrityError, match="changed since"):
            g.evaluate(base_source(), label="after tampering")


def test_the_digest_covers_every_file_of_the_package(tmp_path):
    pkg = tmp_path / "pkg"
    shutil.copytree(_sandbox.gate_code_root(), pkg, ignore=shutil.ignore_patterns("__pycache__"))
    before = _sandbox.gate_code_digest(pkg)
    assert before == _sandbox.gate_code_digest()
    (pkg / "gate" / "worker.py").write_text((pkg / "gate" / "worker.py").read_text() + "\n# x\n")
    assert _sandbox.gate_code_digest(pkg) != before


def test_the_digest_covers_the_timing_the_worker_uses(tmp_path):
    timing = tmp_path / "timing.py"
    timing.write_bytes(_sandbox.gate_timing_file().read_bytes())
    before = _sandbox.gate_code_digest(timing=timing)
    assert before == _sandbox.gate_code_digest()
    timing.write_text(timing.read_text().replace("FLUSH_BYTES = ", "FLUSH_BYTES = 0 * "))
    assert _sandbox.gate_code_digest(timing=timing) != before


def test_redact_covers_env_and_login_files(user):
    text = f"a {API_KEY} b {LOGIN_TOKEN} c"
    assert _core.agent.redact(text) == "a [redacted] b [redacted] c"
    assert _core.agent.redact(text, env={}) == text  # nothing known, nothing removed
