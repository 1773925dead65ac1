"""Gaps in an nsys kernel timeline (`nsys stats --report cuda_gpu_trace --format csv`): for each
kernel name, the median time from the end of the GPU work before it to its own start, and its
median duration. The decode probe's question: is tileops' event-timed gap to torch.compile
(0.3-0.8 us on 5 us rows) spent before the kernel starts or inside it?

    python3 scripts/gpu/trace_gaps.py gpu_trace.csv
"""

import csv
import statistics
import sys
from collections import defaultdict


def column(header: list[str], prefix: str) -> int:
    for i, name in enumerate(header):
        if name.startswith(prefix):
            return i
    raise SystemExit(f"no column starting with {prefix!r} in {header}")


def main(path: str) -> int:
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    start = next((i for i, r in enumerate(rows) if r and r[0].startswith("Start")), None)
    if start is None:
        raise SystemExit(f"{path}: no header row starting with 'Start'")
    header, body = rows[start], rows[start + 1:]
    t0, dur, name = column(header, "Start"), column(header, "Duration"), column(header, "Name")
    events = sorted((int(float(r[t0])), int(float(r[dur])), r[name]) for r in body)
    gaps, durations = defaultdict(list), defaultdict(list)
    for (s0, d0, _), (s1, d1, n1) in zip(events, events[1:]):
        gaps[n1].append(s1 - (s0 + d0))
        durations[n1].append(d1)
    print(f"{'kernel':<60} {'n':>4} {'gap ns':>8} {'dur ns':>8}")
    for n in sorted(gaps, key=lambda k: -len(gaps[k])):
        print(f"{n[:60]:<60} {len(gaps[n]):>4} {statistics.median(gaps[n]):>8.0f} "
              f"{statistics.median(durations[n]):>8.0f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
