"""`tileops bench` report pieces on the CPU (summary, table, plot), and the whole command on the GPU."""

import json
import subprocess
import sys

import pytest

from tileops import bench, manifest, timing


def _row(op_name, impls, copy_tbps=None):
    spec = manifest.op(op_name)
    w = spec.workloads()[0]
    roof = spec.roofline(w["bound"], "h200")
    row = {"op": op_name, "workload": w["label"], "dtypes": w["dtype_case"], "flops": roof["flops"],
           "bytes": roof["bytes"], "intensity": roof["intensity"], "bound": roof["bound"],
           "sol_us": roof["sol_seconds"] * 1e6, "peak_flops": roof["peak_flops"],
           "bandwidth": roof["bandwidth"], "check": "ok",
           "impls": {k: {"median_us": v, "p10_us": v * 0.98, "p90_us": v * 1.03, "runs": 50}
                     for k, v in impls.items()}}
    bench._summarize(row, copy_tbps)
    return row


def test_summary_names_the_strongest_baseline_and_the_ratio():
    row = _row("RMSNormFwdOp", {"tileops": 20.0, "torch eager": 40.0, "torch.compile": 25.0})
    assert row["best_baseline"] == "torch.compile"
    assert row["ratio_vs_best"] == pytest.approx(1.25)
    ours = row["impls"]["tileops"]
    assert ours["tbps"] == pytest.approx(row["bytes"] / 20e-6 / 1e12)
    assert ours["pct_roofline"] == pytest.approx(100 * row["sol_us"] / 20.0)
    line = bench.format_row(row)
    assert "torch.compile" in line and "1.25x" in line and "20.0 (19.6-20.6)" in line
    assert f" memory  {row['sol_us']:>8.2f} " in line  # the spec's bound and speed-of-light time
    assert "pct_of_copy" not in ours  # no copy bandwidth measured: no column value


def test_the_ratio_is_paired_run_by_run_when_the_times_came_alternated():
    # The baseline's runs drift from 40 to 20 us over the measurement, ours from 30 to 15: in
    # every cycle ours is 1.33x faster, which the per-cycle ratio says, the medians' ratio too,
    # but only the per-cycle ratio has a spread of zero.
    base = [40.0 - 20.0 * i / 49 for i in range(50)]
    ours = [b * 0.75 for b in base]
    row = _row("RMSNormFwdOp", {"tileops": 1.0, "torch.compile": 1.0})
    for name, us in (("tileops", ours), ("torch.compile", base)):
        row["impls"][name] = {**timing.summary(sorted(us)), "cycle_us": us}
    bench._summarize(row)
    assert row["ratio_vs_best"] == pytest.approx(4 / 3)
    assert row["ratio_p10"] == pytest.approx(4 / 3) and row["ratio_p90"] == pytest.approx(4 / 3)
    assert "1.33x (1.33-1.33)" in bench.format_row(row)
    # Slow runs of ours in a fifth of the cycles move the p10, not the median.
    for i in range(0, 50, 5):
        ours[i] *= 2
    row["impls"]["tileops"] = {**timing.summary(sorted(ours)), "cycle_us": ours}
    bench._summarize(row)
    assert row["ratio_vs_best"] == pytest.approx(4 / 3) and row["ratio_p10"] < 4 / 3


def test_paired_ratio_refuses_series_that_were_not_timed_together():
    with pytest.raises(ValueError):
        timing.paired_ratio([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        timing.paired_ratio([1.0], [1.0])


def test_a_baseline_failing_under_timing_leaves_the_others_timed():
    def timer(fns):
        out = {}
        for name, fn in fns.items():
            fn()  # raises for "bad": the alternating measurement as a whole fails
            out[name] = {"median_us": 1.0, "p10_us": 1.0, "p90_us": 1.0, "runs": 50}
        return out

    def bad():
        raise RuntimeError("no kernel for this shape")

    got = bench._time_all(timer, {"tileops": lambda: None, "bad": bad, "torch eager": lambda: None})
    assert set(got) == {"tileops", "bad", "torch eager"}
    assert got["tileops"]["median_us"] == 1.0 and got["torch eager"]["median_us"] == 1.0
    assert got["bad"] == {"error": "RuntimeError: no kernel for this shape"}


def test_percent_of_the_measured_copy_bandwidth():
    row = _row("RMSNormFwdOp", {"tileops": 20.0, "torch eager": 40.0}, copy_tbps=4.0)
    ours = row["impls"]["tileops"]
    assert ours["pct_of_copy"] == pytest.approx(100 * ours["tbps"] / 4.0)
    assert f"{ours['pct_of_copy']:.1f}%" in bench.format_row(row)


def test_plot_is_written(tmp_path):
    rows = [_row("RMSNormFwdOp", {"tileops": 20.0, "torch eager": 40.0}),
            _row("GEMMFwdOp", {"tileops": 4.0, "torch.matmul (cuBLAS)": 3.5})]
    out = bench.write_plot(rows, tmp_path / "roofline.png", "test")
    assert out.exists() and out.stat().st_size > 200
    if out.suffix == ".svg":
        text = out.read_text()
        assert text.startswith("<svg") and "RMSNormFwdOp" in text and "polyline" in text


def test_bench_without_a_gpu_says_so():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    r = subprocess.run([sys.executable, "-m", "tileops.cli", "bench", "--quick"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no CUDA GPU" in r.stderr


def test_bench_names_unknown_ops_before_looking_for_a_gpu():
    r = subprocess.run([sys.executable, "-m", "tileops.cli", "bench", "--op",
                        "RMSNormFwdOp, NoSuchOp"], capture_output=True, text=True)
    assert r.returncode == 1
    assert "'NoSuchOp'" in r.stderr and "'RMSNormFwdOp'" not in r.stderr.split("(")[0]
    assert "implemented: " in r.stderr and "SoftmaxFwdOp" in r.stderr


def test_bench_names_a_label_or_dtype_that_matches_no_row_before_looking_for_a_gpu():
    r = subprocess.run([sys.executable, "-m", "tileops.cli", "bench", "--op", "RMSNormFwdOp",
                        "--label", "llama3-8b-decode", "--dtype", "float32"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip() == ("tileops bench: no workload row of RMSNormFwdOp matches "
                                "--label 'llama3-8b-decode' --dtype 'float32'")
    kept = bench.selected_workloads(manifest.op("RMSNormFwdOp"), "bfloat16", "llama3-8b-decode")
    assert [w["label"] for w in kept] == ["llama3-8b-decode"]


@pytest.mark.gpu
def test_bench_one_op_end_to_end(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "tileops.cli", "bench", "--op", "RMSNormFwdOp",
                        "--label", "llama3-8b-decode", "--no-compile", "--json", str(out),
                        "--plot", str(tmp_path / "roofline.png")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(out.read_text())
    (row,) = report["rows"]
    assert row["check"] == "ok" and row["impls"]["tileops"]["runs"] >= 50
    assert row["best_baseline"] == "torch eager" and row["ratio_vs_best"] > 0


TINY_WORKLOADS = {
    "RMSNormFwdOp": ("norm.yaml", [
        "{B: [8], N: 64, dtype_cases: [{T: bfloat16}, {T: float32}], label: tiny}",
        "{B: [3], N: 5, dtype_cases: [{T: float16}], label: tinier}"], {"torch eager"}),
    "GEMMFwdOp": ("gemm.yaml", [
        "{M: 5, N: 6, K: 7, dtype_cases: [{T: float16}, {T: bfloat16}], label: tiny}",
        "{M: 9, N: 3, K: 4, trans_a: true, trans_b: false, dtype_cases: [{T: float16}], label: tn}"],
        {"torch.matmul (cuBLAS)"}),
    "MultiHeadAttentionFwdOp": ("attention.yaml", [
        "{B: 1, Hq: 2, Hkv: 1, Sq: 5, Skv: 7, D: 64, is_causal: true, dtype_cases: [{T: bfloat16}, {T: float16}], label: tiny}",
        "{B: 2, Hq: 2, Hkv: 2, Sq: 1, Skv: 9, D: 128, dtype_cases: [{T: bfloat16}], label: decode}"],
        {"sdpa-cudnn", "sdpa-flash", "sdpa-efficient", "sdpa-math"}),
}


@pytest.mark.parametrize("op_name", sorted(TINY_WORKLOADS))
def test_bench_rows_on_the_reference_backend(op_name, tmp_path, monkeypatch):
    """The row logic (checks against every baseline, backends that do not serve a case, summary,
    JSON-ready rows) on the CPU: tiny workloads in a copy of the specs, the reference kernels
    (_tskernels_ref), a fake timer."""
    import shutil

    from tileops import _kernels

    ref = _kernels._import("tileops._tskernels_ref")
    if isinstance(ref, ImportError) or op_name not in ref.kernels().values():
        pytest.skip(f"{op_name} is not in _tskernels_ref here")
    yaml_file, workloads, baselines = TINY_WORKLOADS[op_name]
    specs = tmp_path / "specs"
    shutil.copytree(manifest.specs_dir(), specs)
    text = (specs / yaml_file).read_text()
    start = text.index("  workloads:\n", text.index(op_name + ":"))
    end = text.index("  roofline:", start)
    rows_yaml = "".join(f"    - {w}\n" for w in workloads)
    (specs / yaml_file).write_text(text[:start] + "  workloads:\n" + rows_yaml + text[end:])
    monkeypatch.setenv("TILESMITH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILEOPS_SPECS", str(specs))
    calls = []

    def timer(fns):  # each implementation once; the row's ratio then comes from the medians
        out = {}
        for name, fn in fns.items():
            fn()
            calls.append(name)
            out[name] = {"median_us": 10.0 + len(calls), "p10_us": 9.0, "p90_us": 12.0,
                         "runs": 50}
        return out

    lines = []
    with _kernels.use_reference_backend():
        rows = bench.bench_op(op_name, timer, "h200", False, None, None, False, lines.append,
                              device="cpu")
    assert len(rows) == sum(w.count("{T:") for w in workloads) == len(lines)
    for r in rows:
        assert r.get("check") == "ok", (r.get("error"), r.get("max_rel_err_vs"))
        assert set(r["impls"]) == baselines | {"tileops"}
        timed = {n for n, i in r["impls"].items() if "median_us" in i}
        assert "tileops" in timed and r["best_baseline"] in timed - {"tileops"}
        # on the CPU the GPU-only SDPA backends fail and are reported, not timed
        assert all("error" in i for n, i in r["impls"].items() if n not in timed)
        assert r["impls"]["tileops"]["pct_roofline"] > 0
        json.dumps(r)
