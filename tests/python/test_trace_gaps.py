"""scripts/gpu/trace_gaps.py on a small nsys-style kernel trace (no GPU needed)."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gpu" / "trace_gaps.py"

TRACE = """Generating SQLite file probe.sqlite
Start (ns),Duration (ns),CorrId,GrdX,Strm,Name
1000,500,1,16,7,reduce_kernel
1600,300,2,16,7,rms_norm_kernel
3000,500,3,16,7,reduce_kernel
3900,340,4,16,7,rms_norm_kernel
5000,500,5,16,7,reduce_kernel
5800,320,6,16,7,rms_norm_kernel
"""


def run(tmp_path, text):
    path = tmp_path / "trace.csv"
    path.write_text(text)
    return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True,
                          text=True)


def test_median_gap_and_duration_per_kernel(tmp_path):
    out = run(tmp_path, TRACE)
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("rms_norm_kernel"))
    # gaps after each reduce: 1600-1500, 3900-3500, 5800-5500 -> median 300; durations median 320
    assert line.split()[1:] == ["3", "300", "320"]
    reduce = next(x for x in out.stdout.splitlines() if x.startswith("reduce_kernel"))
    assert reduce.split()[1:] == ["2", "930", "500"]  # 3000-1900, 5000-4240: 1100, 760


def test_a_trace_without_a_header_is_refused(tmp_path):
    out = run(tmp_path, "no,header\n1,2\n")
    assert out.returncode != 0
    assert "no header row" in out.stderr
