"""`tileops bench` report pieces on the CPU (summary, table, plot), and the whole command on the GPU."""

import json
import subprocess
import sys

import pytest

from tileops import bench, manifest


def _row(op_name, impls):
    spec = manifest.op(op_name)
    w = spec.workloads()[0]
    roof = spec.roofline(w["bound"], "h200")
    row = {"op": op_name, "workload": w["label"], "dtypes": w["dtype_case"], "flops": roof["flops"],
           "bytes": roof["bytes"], "intensity": roof["intensity"], "bound": roof["bound"],
           "sol_us": roof["sol_seconds"] * 1e6, "peak_flops": roof["peak_flops"],
           "bandwidth": roof["bandwidth"], "check": "ok",
           "impls": {k: {"median_us": v, "p10_us": v * 0.98, "p90_us": v * 1.03, "runs": 50}
                     for k, v in impls.items()}}
    bench._summarize(row)
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
