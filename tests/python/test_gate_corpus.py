"""The gate against its adversarial corpus (tests/gate/corpus/): every attack rejected with the
reason its header names, honest rewrites accepted and confirmed, A-versus-A never accepted.
CPU entries run here; CUDA entries (and the whole corpus on CUDA) are marked gpu."""

import pytest
import torch

from gate_corpus import base_args, base_source, entries
from tilesmith.gate import Gate, GateOptions

ALL = entries()
CPU = [e for e in ALL if e.needs == "cpu" and not e.slow]


def _ids(es):
    return [e.name for e in es]


@pytest.fixture(scope="module")
def cpu_gate(tmp_path_factory):
    gate = Gate(base_source(), base_args(), tmp_path_factory.mktemp("track"),
                GateOptions(device="cpu", timeout_s=120, pairs=120))
    yield gate
    gate.close()


def test_corpus_is_complete():
    attacks = [e for e in ALL if e.role == "attack"]
    assert len(attacks) >= 20
    assert any(e.role == "honest" for e in ALL)
    assert any(e.role == "identical" for e in ALL)
    for e in ALL:
        assert e.expect and e.expect[0], f"{e.name}: no '# expect:' header"
        assert e.needs in ("cpu", "cuda"), e.name
    kinds = {k for e in attacks for k in e.expect}
    # Every class of defence is exercised by at least one attack.
    for k in ("tamper", "global_flag", "background_thread", "output_type", "aliasing",
              "mutation", "stray_write", "rng", "incorrect", "nondeterministic", "caching",
              "timing_suspicious", "persisting_l2", "crashed", "timeout", "exception",
              "protocol"):
        assert k in kinds, k


def _check(report, entry):
    if entry.role == "honest":
        assert report.verdict == "accepted", report.summary()
        assert report.confirmed
        assert report.speedup > 1.3
        assert report.reason.startswith("accepted: ")
    else:
        assert report.verdict == "rejected", report.summary()
        assert report.kind in entry.expect, f"{entry.name}: {report.reason} (expected {entry.expect})"
        assert report.reason.startswith(f"rejected: {report.kind} ("), report.reason


@pytest.mark.parametrize("entry", CPU, ids=_ids(CPU))
def test_corpus_cpu(cpu_gate, entry):
    _check(cpu_gate.evaluate(entry.source, label=entry.name), entry)


def test_a_versus_a_never_accepted(cpu_gate):
    src = next(e for e in ALL if e.role == "identical").source
    for i in range(3):
        r = cpu_gate.evaluate(src, label=f"a_vs_a_{i}")
        assert r.verdict == "rejected", r.summary()
        assert r.kind in ("not_faster", "too_noisy"), r.reason
    # The original's own source, header and all, is the strictest A-versus-A.
    r = cpu_gate.evaluate(base_source(), label="a_vs_a_base")
    assert r.verdict == "rejected" and r.kind in ("not_faster", "too_noisy"), r.reason


GPU = [e for e in ALL if not e.slow]


@pytest.fixture(scope="module")
def cuda_gate(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    # Large enough that GPU time dominates launch overhead (~1.5 ms for the base graph).
    gate = Gate(base_source(), base_args(2048, 2048, 2048, device="cuda"),
                tmp_path_factory.mktemp("track_cuda"), GateOptions(device="cuda", timeout_s=300))
    yield gate
    gate.close()


@pytest.mark.gpu
@pytest.mark.parametrize("entry", GPU, ids=_ids(GPU))
def test_corpus_cuda(cuda_gate, entry):
    _check(cuda_gate.evaluate(entry.source, label=entry.name), entry)
