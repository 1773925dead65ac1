"""The workload suite and the `tilesmith bench` runner, on the CPU.

Every suite problem is loaded as the runner loads it and one step (forward, and backward for
training problems) runs on the meta device, so shapes, dtypes and the loss are checked without
doing the arithmetic. The runner itself runs end to end on tiny problems: a good one, a broken
one and one that hangs, each in its own process, with a deadline.
"""

import importlib.util
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import pytest
import torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCH = ROOT / "python" / "tilesmith" / "bench.py"
SUITE = sorted((ROOT / "bench" / "suite").glob("*.py"))


def load_bench():
    spec = importlib.util.spec_from_file_location("tilesmith_bench_under_test", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_suite_is_large_and_varied():
    assert len(SUITE) >= 30
    bench = load_bench()
    mods = [bench.load_problem(p) for p in SUITE]
    train = [m for m in mods if getattr(m, "TRAIN", False)]
    bf16 = [m for m in mods if getattr(m, "DTYPE", None) is torch.bfloat16]
    assert len(train) >= 8 and len(mods) - len(train) >= 20
    assert len(bf16) >= 10 and len(mods) - len(bf16) >= 10
    assert set(bench.QUICK) <= {p.stem for p in SUITE}


@pytest.mark.parametrize("path", SUITE, ids=[p.stem for p in SUITE])
def test_problem_runs_one_step_on_the_meta_device(path):
    bench = load_bench()
    prob = bench._Problem(path, seed=0, device="meta")
    model = prob.fresh_model()
    step, observe = prob.step_fn(model, model)
    got = observe()
    assert got and all(t is not None for t in got)
    if prob.train:
        n_params = sum(1 for p in model.parameters() if p.requires_grad)
        assert n_params > 0 and len(got) > n_params  # outputs, then one gradient per parameter
    if prob.dtype is not None:  # floating inputs and parameters were cast
        floats = [t for t in [*prob.inputs, *model.parameters()] if t.is_floating_point()]
        assert floats and all(t.dtype == prob.dtype for t in floats)


def test_compare_reports_errors_against_the_tolerance():
    bench = load_bench()
    a = torch.ones(4)
    assert bench._compare([a], [a.clone()], 1e-3, 1e-3) == (0.0, 0.0)
    err_abs, ratio = bench._compare([a + 0.1], [a], 1e-3, 1e-3)
    assert err_abs == pytest.approx(0.1) and ratio > 1
    assert bench._compare([a], [torch.ones(5)], 1e-3, 1e-3)[1] == float("inf")
    assert bench._compare([a * float("nan")], [a], 1e-3, 1e-3)[1] == float("inf")


def test_compare_works_in_chunks(monkeypatch):
    bench = load_bench()
    monkeypatch.setattr(bench, "_COMPARE_CHUNK", 7)  # many chunks, a partial last one
    want = torch.arange(100, dtype=torch.float32).reshape(10, 10)
    got = want.clone()
    got[9, 9] += 0.5  # in the last, partial chunk
    err_abs, ratio = bench._compare([got.t()], [want.t()], 1e-3, 0.0)  # strided outputs too
    assert err_abs == pytest.approx(0.5) and ratio == pytest.approx(500.0)
    got[0, 0] = float("inf")  # a non-finite value where the reference is finite, in chunk 1
    assert bench._compare([got], [want], 1e-3, 0.0)[1] == float("inf")
    assert bench._to_host([want, None])[0].device.type == "cpu"


def test_summary_geomean_and_incorrect_installs():
    bench = load_bench()

    def rec(name, ind, ts, installed=True, correct=True):
        return bench._derive({"problem": name, "status": "ok", "columns": {
            "inductor": {"status": "ok", "ms": ind},
            "tilesmith": {"status": "ok", "ms": ts, "installed": installed, "correct": correct}}})

    s = bench.summarize([rec("a", 2.0, 1.0), rec("b", 1.0, 1.0, installed=False),
                         rec("c", 1.0, 0.5, correct=False)])
    assert s["geomean_tilesmith"] == pytest.approx((2 * 1 * 2) ** (1 / 3))
    assert s["installed"] == 2 and s["incorrect_installs"] == 1
    assert s["min_speedup_tilesmith"] == pytest.approx(1.0)


def test_summary_and_table_name_the_installed_rewrites():
    bench = load_bench()

    def rec(name, ts, rewrites, tried=()):
        return bench._derive({"problem": name, "status": "ok", "columns": {
            "inductor": {"status": "ok", "ms": 1.0},
            "tilesmith": {"status": "ok", "ms": ts, "installed": bool(rewrites), "correct": True,
                          "graphs": [{"rewrites": list(r)} for r in rewrites],
                          "tried": [{"graph": 1, "rewrites": list(r), "verdict": "rejected"}
                                    for r in tried]}}})

    records = [rec("a", 0.5, [("cuda_graph",), ("autotune", "cuda_graph")],
                   tried=[("cuda_graph", "tileops")]),
               rec("b", 0.8, [("autotune",)]), rec("c", 1.0, [], tried=[("tileops",)])]
    assert records[0]["rewrites"] == ["autotune", "cuda_graph"] and records[2]["rewrites"] == []
    s = bench.summarize(records)
    assert s["installed_by_rewrite"] == {"autotune": ["a", "b"], "cuda_graph": ["a"]}
    assert s["tried_by_rewrite"] == {"cuda_graph": ["a"], "tileops": ["a", "c"]}
    import io

    out = io.StringIO()
    bench.print_table(records, s, out)
    lines = out.getvalue().splitlines()
    assert lines[3].endswith("(autotune, cuda_graph)") and lines[4].endswith("(autotune)")
    assert not lines[5].endswith(")")
    assert "tileops on 2 problems (installed on 0)" in out.getvalue()


def test_rewrite_kinds_reads_the_search_agents_banners():
    from tilesmith import _install

    assert _install.rewrite_kinds("def call(args):\n    pass\n") == ("model",)
    text = ("# ---- tilesmith-search: wider autotuning (helper v1) ----\n"
            "# ---- tilesmith-search: CUDA graph replay of call() (runtime v3) ----\n")
    assert _install.rewrite_kinds(text) == ("autotune", "cuda_graph")
    fused = "    # ---- tilesmith-search: epilogue fusion (matmul + bias + ReLU in one cuBLASLt call)\n"
    assert _install.rewrite_kinds(text + fused) == ("autotune", "cuda_graph", "epilogue")


TINY = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2 + 1

def get_inputs():
    return [torch.randn(32, 32)]

def get_init_inputs():
    return []
'''
BROKEN = '''
import torch.nn as nn
class Model(nn.Module):
    pass
def get_inputs():
    raise RuntimeError("broken on purpose")
def get_init_inputs():
    return []
'''
HANGS = '''
import time
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        time.sleep(600)
        return x
def get_inputs():
    return [torch.randn(4)]
def get_init_inputs():
    return []
'''


def test_timing_alternates_the_columns_step_by_step():
    bench = load_bench()
    calls = []
    steps = {c: (lambda c=c: calls.append(c)) for c in ("inductor", "tilesmith", "max_autotune")}
    out = bench._time_interleaved(steps, torch.device("cpu"), min_runs=12, max_runs=12,
                                  target_s=0.0, rounds=3)
    assert {c: out[c]["runs"] for c in steps} == {c: 12 for c in steps}
    assert all(len(out[c]["round_medians_ms"]) == 3 for c in steps)
    # After each column's own warm-up and sizing (8 calls), cycles of one step per column,
    # the first column of each cycle moving on by one.
    cycles = calls[3 * 8:]
    assert len(cycles) == 12 * 3
    assert [cycles[i:i + 3] for i in range(0, 9, 3)] == [
        ["inductor", "tilesmith", "max_autotune"],
        ["tilesmith", "max_autotune", "inductor"],
        ["max_autotune", "inductor", "tilesmith"]]
    assert all(sorted(cycles[i:i + 3]) == sorted(steps) for i in range(0, len(cycles), 3))


def test_split_gives_consecutive_nonempty_parts():
    bench = load_bench()
    assert bench._split(list(range(7)), 3) == [[0, 1], [2, 3, 4], [5, 6]]
    assert bench._split([1, 2], 6) == [[1], [2]]


def test_a_table_of_rows_from_two_gpus_names_each_rows_gpu():
    bench = load_bench()

    def rec(name, ts, gpu):
        r = bench._derive({"problem": name, "status": "ok", "columns": {
            "inductor": {"status": "ok", "ms": 1.0},
            "tilesmith": {"status": "ok", "ms": ts, "installed": True, "correct": True}}})
        return {**r, "device": gpu}

    import io

    same = [rec("a", 0.5, "NVIDIA H200"), rec("b", 0.8, "NVIDIA H200")]
    s = bench.summarize(same)
    assert s["devices"] == {"NVIDIA H200": 2}
    out = io.StringIO()
    bench.print_table(same, s, out)
    assert "H200" not in out.getvalue()  # one card: the rows need not say which
    mixed = same + [rec("c", 0.9, "NVIDIA H100 80GB HBM3")]
    s = bench.summarize(mixed)
    assert s["devices"] == {"NVIDIA H100 80GB HBM3": 1, "NVIDIA H200": 2}
    out = io.StringIO()
    bench.print_table(mixed, s, out)
    lines = out.getvalue().splitlines()
    assert lines[3].endswith("[NVIDIA H200]") and lines[5].endswith("[NVIDIA H100 80GB HBM3]")
    assert "rows measured on: NVIDIA H100 80GB HBM3 (1), NVIDIA H200 (2)" in lines[-1]


def test_runner_isolates_failures_and_keeps_going(tmp_path):
    probs = tmp_path / "problems"
    probs.mkdir()
    (probs / "a_tiny.py").write_text(TINY)
    (probs / "b_broken.py").write_text(BROKEN)
    (probs / "c_hangs.py").write_text(HANGS)
    out = tmp_path / "r.json"
    r = subprocess.run(
        [sys.executable, str(BENCH), str(probs), "--device", "cpu", "--columns", "eager,tilesmith",
         "--timeout", "25", "--out", str(out), "--plot", str(tmp_path / "r.svg"),
         "--min-runs", "3", "--target-s", "0.05"],
        capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    recs = {x["problem"]: x for x in doc["records"]}
    assert recs["a_tiny"]["status"] == "ok"
    assert recs["a_tiny"]["columns"]["eager"]["status"] == "ok"
    assert recs["a_tiny"]["columns"]["eager"]["ms"] > 0
    if recs["a_tiny"]["columns"]["tilesmith"]["status"] == "ok":  # both alive: timed together
        for c in ("eager", "tilesmith"):
            e = recs["a_tiny"]["columns"][c]
            assert e["timing"] == "alternating" and e["ms_sequential"] > 0 and e["rounds"] == 6
    # tilesmith either ran or said why it could not (never took the problem down with it)
    assert recs["a_tiny"]["columns"]["tilesmith"]["status"] in ("ok", "error")
    assert recs["b_broken"]["status"] == "error" and "broken on purpose" in recs["b_broken"]["error"]
    assert recs["c_hangs"]["status"] == "timeout"
    assert "[1/3] a_tiny" in r.stderr and "[3/3] c_hangs" in r.stderr
    assert (tmp_path / "r.svg").read_text().startswith("<svg") or (tmp_path / "r.png").exists()
    # --resume keeps what finished and reruns only the rest; rows of a file from before rows
    # named their GPU take the file's
    doc["meta"]["device"] = "NVIDIA H200"
    out.write_text(json.dumps(doc))
    r2 = subprocess.run(
        [sys.executable, str(BENCH), str(probs), "--device", "cpu", "--columns", "eager",
         "--problems", "a_tiny", "--resume", "--out", str(out)],
        capture_output=True, text=True, timeout=120)
    assert r2.returncode == 0 and "0 problem(s) to run (1 kept" in r2.stderr
    assert "a_tiny: finished in" in r2.stderr and "--rerun a_tiny measures them again" in r2.stderr
    kept = {x["problem"]: x for x in json.loads(out.read_text())["records"]}
    assert kept["a_tiny"]["device"] == "NVIDIA H200"
    # --rerun measures a kept problem again
    r3 = subprocess.run(
        [sys.executable, str(BENCH), str(probs), "--device", "cpu", "--columns", "eager",
         "--problems", "a_tiny", "--resume", "--rerun", "a_tiny", "--out", str(out),
         "--min-runs", "3", "--target-s", "0.05"],
        capture_output=True, text=True, timeout=120)
    assert r3.returncode == 0 and "1 problem(s) to run (0 kept" in r3.stderr, r3.stderr
    assert "finished in" not in r3.stderr
    kept = {x["problem"]: x for x in json.loads(out.read_text())["records"]}["a_tiny"]
    assert kept["status"] == "ok"
    # A rerun the budget does not reach, or one that fails, keeps the earlier record.
    for extra in (["--time-budget", "10"], ["--timeout", "0.5"]):
        r4 = subprocess.run(
            [sys.executable, str(BENCH), str(probs), "--device", "cpu", "--columns", "eager",
             "--problems", "a_tiny", "--resume", "--rerun", "a_tiny", "--out", str(out), *extra],
            capture_output=True, text=True, timeout=120)
        assert r4.returncode == 0, r4.stderr
        again = {x["problem"]: x for x in json.loads(out.read_text())["records"]}["a_tiny"]
        assert again["status"] == "ok"
        assert again["columns"]["eager"]["ms"] == kept["columns"]["eager"]["ms"]
    assert again["rerun_failed"].startswith("timeout")


def _run_fake(tmp_path, script, columns=("eager",)):
    """bench._run_one with `script` standing in for the child's interpreter, a 2 s deadline."""
    bench = load_bench()
    fake = tmp_path / "fake-python"
    fake.write_text(script)
    fake.chmod(0o755)
    p = bench.argparse.ArgumentParser()
    bench.add_arguments(p)
    args = p.parse_args(["--python", str(fake), "--device", "cpu"])
    t0 = time.monotonic()
    r = bench._run_one(tmp_path / "slow.py", list(columns), 2.0, args, None)
    return r, time.monotonic() - t0


# A stand-in interpreter for the child: writes the record a real child leaves once every column
# but max_autotune was timed together, then "compiles" max_autotune past the deadline.
FAKE_CHILD = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --record ] && rec=$2; shift; done
cat > "$rec" <<JSON
{"problem": "slow", "columns": {
  "inductor": {"status": "ok", "ms": 2.0, "timing": "interleaved"},
  "tilesmith": {"status": "ok", "ms": 1.0, "timing": "interleaved", "installed": true,
                "correct": true}},
 "status": "running", "interleaved_before": "max_autotune"}
JSON
exec sleep 60
"""


def test_a_deadline_during_the_last_reference_column_keeps_the_timed_ones(tmp_path):
    bench = load_bench()
    r, _ = _run_fake(tmp_path, FAKE_CHILD, ["inductor", "tilesmith", "max_autotune"])
    assert r["status"] == "ok" and r["speedup_tilesmith"] == 2.0 and r["installed"]
    assert r["columns"]["max_autotune"]["status"] == "timeout"
    assert "deadline" in r["columns"]["max_autotune"]["error"] and r["wall_s"] < 30
    out = __import__("io").StringIO()
    bench.print_table([r], bench.summarize([r]), out=out)
    assert "max_autotune: timeout" in out.getvalue()


def test_speedup_is_also_given_per_round():
    bench = load_bench()
    r = bench._derive({"columns": {
        "inductor": {"status": "ok", "ms": 2.0, "round_medians_ms": [2.0, 2.2, 1.8]},
        "tilesmith": {"status": "ok", "ms": 1.0, "round_medians_ms": [1.0, 2.2, 0.9]}}})
    assert r["speedup_tilesmith"] == 2.0
    assert r["speedup_tilesmith_by_round"] == pytest.approx([2.0, 1.0, 2.0])
    out = __import__("io").StringIO()
    rec = {**r, "problem": "p", "status": "ok"}
    bench.print_table([rec], bench.summarize([rec]), out=out)
    assert "rounds 1.00-2.00x" in out.getvalue()
    # No per-round figure where a column was timed on its own (a sequential figure only).
    r = bench._derive({"columns": {"inductor": {"status": "ok", "ms": 2.0},
                                   "tilesmith": {"status": "ok", "ms": 1.0}}})
    assert "speedup_tilesmith_by_round" not in r


def test_speedup_pairs_the_steps_of_each_cycle():
    """Two copies of the same code on a host that switches between a fast and a slow regime
    every few cycles, split about evenly: each column's median may land in either regime, so
    their ratio is far from 1; the pairs of each cycle share a regime, so the paired figure is
    1 (and a real 2x gap reads 2x)."""
    bench = load_bench()
    regime = [0.08 if (i // 5) % 2 else 0.14 for i in range(200)]
    regime[0] = 0.08  # 101 fast steps of 200: the median is fast
    same = [t * (1.0 + 0.001 * ((i * 7) % 3 - 1)) for i, t in enumerate(regime)]
    same[105:110] = [0.14] * 5  # one fast block slow for the copy: its median is slow
    faster = [t / 2 for t in regime]
    paired = bench._paired(regime, same, rounds=4)
    assert statistics.median(regime) / statistics.median(same) < 0.7
    assert paired["median"] == pytest.approx(1.0, abs=0.002)
    assert paired["pairs"] == 200 and len(paired["round_medians"]) == 4
    assert bench._paired(regime, faster, rounds=4)["median"] == pytest.approx(2.0)
    assert bench._paired([1.0], [0.0], rounds=2) == {}


def test_paired_speedup_is_the_gates_estimator():
    # The figures of tileops.timing.paired_ratio, which are the gate's paired_stats read the
    # other way round (inductor / column): over all pairs and over each round's pairs. Rounds
    # of two pairs make the round figure the geometric mean of its two ratios.
    from tileops import timing
    from tilesmith import _core

    bench = load_bench()
    base = [2.0, 3.0, 1.0, 4.0, 2.5, 1.5, 2.2, 3.3, 0.9]
    ms = [1.0, 1.0, 2.0, 1.0, 2.5, 0.5, 1.1, 1.1, 0.3]  # ratios 2, 3, .5, 4, 1, 3, 2, 3, 3
    paired = bench._paired(base, ms, rounds=4)
    want = timing.paired_ratio(base, ms)
    gate = _core.paired_stats(base, ms)
    assert paired["pairs"] == want["pairs"] == gate.n == 9
    assert paired["median"] == want["ratio"] == pytest.approx(3.0)
    assert paired["median"] == pytest.approx(1 / gate.ratio, rel=1e-12)
    assert (paired["p10"], paired["p90"]) == (want["ratio_p10"], want["ratio_p90"])
    assert paired["p10"] == pytest.approx(1 / gate.ratio_p90, rel=1e-12)
    assert (paired["ci_lower"], paired["ci_upper"]) == (want["ratio_lower"], want["ratio_upper"])
    assert paired["ci_upper"] == pytest.approx(1 / gate.ratio_lower, rel=1e-12)
    parts = bench._split(list(zip(base, ms)), 4)
    assert [len(p) for p in parts] == [2, 2, 3, 2]
    assert paired["round_medians"] == pytest.approx([6 ** 0.5, 2 ** 0.5, 2.0, 3.0])
    # Pairs with a time that is not positive are left out; fewer than two pairs: no figure.
    assert bench._paired(base + [1.0], ms + [0.0], rounds=4) == paired
    assert bench._paired([1.0, 2.0], [0.5, 0.0], rounds=2) == {}


def test_interleaved_timing_gives_each_column_its_paired_speedup():
    bench = load_bench()
    steps = {"inductor": lambda: time.sleep(0.002), "tilesmith": lambda: time.sleep(0.001),
             "eager": lambda: None}
    out = bench._time_interleaved(steps, torch.device("cpu"), min_runs=10, max_runs=10,
                                  target_s=0.0, rounds=2)
    assert "paired_speedup" not in out["inductor"]
    assert out["tilesmith"]["paired_speedup"]["pairs"] == 10
    assert 1.3 < out["tilesmith"]["paired_speedup"]["median"] < 2.5
    r = bench._derive({"columns": {c: {**out[c], "status": "ok"} for c in out}})
    assert r["speedup_estimator"] == "paired"
    assert r["speedup_tilesmith"] == out["tilesmith"]["paired_speedup"]["median"]
    assert r["speedup_tilesmith_by_round"] == out["tilesmith"]["paired_speedup"]["round_medians"]
    assert r["speedup_of_medians"]["tilesmith"] == pytest.approx(
        out["inductor"]["ms"] / out["tilesmith"]["ms"])
    # A record from before (no pairs) keeps the ratio of the medians.
    old = bench._derive({"columns": {"inductor": {"status": "ok", "ms": 2.0},
                                     "tilesmith": {"status": "ok", "ms": 1.0}}})
    assert old["speedup_estimator"] == "ratio_of_medians" and old["speedup_tilesmith"] == 2.0


# A child that leaves a process in a session of its own holding the output pipe, then hangs.
STRAY_CHILD = """#!/bin/sh
setsid sleep 300.{mark} &
echo started
exec sleep 300
"""

CRASHING_CHILD = """#!/bin/sh
echo "loading the problem"
echo "last words"
kill -SEGV $$
"""


def _processes_with(mark: str) -> list[int]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    if mark.encode() in f.read():
                        found.append(int(d))
            except OSError:
                pass
    return found




def test_the_deadline_ends_a_problem_whose_stray_holds_the_pipe(tmp_path):
    mark = str(os.getpid())
    r, wall = _run_fake(tmp_path, STRAY_CHILD.replace("{mark}", mark))
    assert r["status"] == "timeout" and wall < 20, (r, wall)
    time.sleep(0.2)
    assert _processes_with(f"300.{mark}") == []


def test_a_crash_reports_its_signal_and_the_last_lines(tmp_path):
    r, _ = _run_fake(tmp_path, CRASHING_CHILD)
    assert r["status"] == "crashed"
    assert "signal 11 (SIGSEGV)" in r["error"] and "last words" in r["error"], r["error"]


def test_the_oracle_is_the_fastest_column_torch_offers_per_graph(tmp_path):
    bench = load_bench()

    def rec(name, **speedups):
        cols = {"inductor": {"status": "ok", "ms": 1.0}}
        for c, v in speedups.items():
            cols[c] = {"status": "ok", "ms": 1.0 / v}
        cols["tilesmith"].update(installed=True, correct=True)
        return bench._derive({"problem": name, "status": "ok", "columns": cols})

    # a: reduce-overhead is the oracle (2x) and Tilesmith 1.5x over default: 0.75x of it.
    a = rec("a", tilesmith=1.5, eager=0.5, max_autotune=1.1, reduce_overhead=2.0)
    assert a["oracle_column"] == "reduce_overhead"
    assert a["speedup_oracle"] == pytest.approx(0.75)
    # b: every compiled column is slower than Inductor default itself: default is the oracle.
    b = rec("b", tilesmith=1.2, eager=0.9, max_autotune=0.95, reduce_overhead=0.99)
    assert b["oracle_column"] == "inductor" and b["speedup_oracle"] == pytest.approx(1.2)
    # c: a column missing: its ratio exists but the headline leaves it out.
    c = rec("c", tilesmith=3.0, eager=1.0)
    s = bench.summarize([a, b, c])
    assert s["oracle_measured"] == 2 and s["below_oracle"] == ["a"]
    assert s["geomean_oracle"] == pytest.approx((0.75 * 1.2) ** 0.5)
    import io

    out = io.StringIO()
    bench.print_table([a, b, c], s, out)
    head = out.getvalue().splitlines()[0]
    assert "per-graph oracle" in head and "0.949x on 2 problems" in head
    assert "0.75x" in out.getvalue().splitlines()[3]
    plot = bench.write_plot([a, b, c], tmp_path / "plot.svg")
    assert "0.949x on 2 problems" in plot.read_text()


def test_a_columns_compared_outputs_are_freed_before_it_is_timed(tmp_path, monkeypatch):
    # With an input of a third of the card, the compared outputs held through the timing (next
    # to the input and each step's own output) were what ran every column out of memory.
    import argparse
    import gc
    import weakref

    bench = load_bench()
    (tmp_path / "a_tiny.py").write_text(TINY)
    observed = []
    step_fn = bench._Problem.step_fn

    def watched_step_fn(self, model, fn, mark_step=False):
        step, observe = step_fn(self, model, fn, mark_step)

        def watched():
            got = observe()
            observed.extend(weakref.ref(t) for t in got if isinstance(t, torch.Tensor))
            return got

        return step, watched

    alive_at_timing = []

    def timed(step, device, *a):
        gc.collect()
        alive_at_timing.append(sum(r() is not None for r in observed))
        return {"ms": 1.0}

    monkeypatch.setattr(bench._Problem, "step_fn", watched_step_fn)
    monkeypatch.setattr(bench, "_time", timed)
    args = argparse.Namespace(seed=0, device="cpu", agent_model="tilesmith-search",
                              max_model_calls=1, min_runs=3, max_runs=5, target_s=0.01)
    bench.run_child(tmp_path / "a_tiny.py", ["eager"], tmp_path / "r.json", args)
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["columns"]["eager"]["status"] == "ok", record
    assert observed and alive_at_timing == [0]


def _child_args():
    import argparse

    return argparse.Namespace(seed=0, device="cpu", agent_model="tilesmith-search",
                              max_model_calls=1, min_runs=3, max_runs=5, target_s=0.01)


def test_a_failed_column_lets_go_of_its_memory_before_the_next_one(tmp_path, monkeypatch):
    # reduce-overhead failing on an input of a third of the card kept its graph pool, and every
    # later column (and the interleaved timing) then ran out of memory too.
    import gc
    import weakref

    bench = load_bench()
    (tmp_path / "a_tiny.py").write_text(TINY)
    held, alive_when_next_compiles = [], []
    compile_real = bench._compile

    def compile_(column, model, inputs, *a):
        gc.collect()
        alive_when_next_compiles.append(sum(r() is not None for r in held))
        if column != "reduce_overhead":
            return compile_real("eager", model, inputs, *a)
        pool = torch.empty(1 << 20)  # what the failing column's graphs hold
        held.append(weakref.ref(pool))

        def fails(*xs):
            raise torch.OutOfMemoryError(f"CUDA out of memory ({pool.numel()} held)")

        return fails

    monkeypatch.setattr(bench, "_compile", compile_)
    monkeypatch.setattr(bench, "_time", lambda step, device, *a: {"ms": 1.0})
    bench.run_child(tmp_path / "a_tiny.py", ["eager", "reduce_overhead", "max_autotune"],
                    tmp_path / "r.json", _child_args())
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["columns"]["reduce_overhead"]["status"] == "error"
    assert record["columns"]["max_autotune"]["status"] == "ok", record
    assert held and alive_when_next_compiles[-1] == 0


def test_interleaved_timing_that_does_not_fit_keeps_the_sequential_figures(tmp_path, monkeypatch):
    bench = load_bench()
    (tmp_path / "a_tiny.py").write_text(TINY)
    compile_real = bench._compile
    monkeypatch.setattr(bench, "_compile", lambda c, m, i, *a: compile_real("eager", m, i, *a))
    monkeypatch.setattr(bench, "_time", lambda step, device, *a: {"ms": 1.0})

    def no_room(*a, **k):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 26.39 GiB.\nmore")

    monkeypatch.setattr(bench, "_time_interleaved", no_room)
    bench.run_child(tmp_path / "a_tiny.py", ["eager", "inductor"], tmp_path / "r.json",
                    _child_args())
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["status"] == "ok", record
    assert record["interleaved_error"] == ("OutOfMemoryError: CUDA out of memory. Tried to "
                                           "allocate 26.39 GiB.")
    for c in ("eager", "inductor"):
        assert record["columns"][c]["status"] == "ok"
        assert record["columns"][c]["timing"] == "sequential" and record["columns"][c]["ms"] == 1.0
