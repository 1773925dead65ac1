#!/usr/bin/env bash
# The tuned `tileops bench` of two builds on one GPU, op by op in alternation: BEFORE (a tileops
# wheel in .gpu/before/, installed here into /tmp/site-before) and AFTER (the installed one,
# scripts/gpu/env.sh). Each side keeps its own tune cache (its choices are keyed by its build).
# Rows and logs under $OUT/ba/, the comparison in $OUT/ba/summary.txt.
#   source scripts/gpu/env.sh && bash dev/bench_before_after.sh OP[,OP...] [ROUNDS]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/ba-out}
ops=${1:?ops, comma-separated}
rounds=${2:-1}
mkdir -p "$OUT/ba"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-before --upgrade \
  .gpu/before/tileops-*.whl 2>&1 | grep -v "Running pip as" || true
for op in ${ops//,/ }; do
  for r in $(seq "$rounds"); do
    order="before after"
    if [ $((r % 2)) = 0 ]; then order="after before"; fi
    for side in $order; do
      path=$PYTHONPATH
      if [ "$side" = before ]; then path=/tmp/site-before:$PYTHONPATH; fi
      t0=$SECONDS
      TILESMITH_CACHE_DIR=/tmp/ts-cache-$side PYTHONPATH=$path python3 -m tileops.cli bench \
        --tune --op "$op" --json "$OUT/ba/$op.$side.$r.json" > "$OUT/ba/$op.$side.$r.log" 2>&1
      echo "$op $side round $r rc=$? $((SECONDS - t0))s"
    done
  done
done
python3 - "$OUT/ba" <<'PY' | tee "$OUT/ba/summary.txt"
import json, pathlib, sys
from collections import defaultdict

rows = defaultdict(dict)
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    side = f.name.split(".")[1]
    for row in json.loads(f.read_text())["rows"]:
        ours = row["impls"].get("tileops", {})
        if "median_us" in ours:
            rows[(row["op"], row["workload"], row["dtypes"])].setdefault(side, []).append(
                (ours["median_us"], ours["p10_us"], ours["p90_us"], row.get("ratio_vs_best"),
                 row.get("ratio_p10"), row.get("ratio_p90"), row.get("best_baseline")))
print(f"{'op':<24} {'workload':<26} {'dtypes':<12} {'before us (p10-p90)':>24} "
      f"{'after us (p10-p90)':>24} {'after/before':>12}  {'ratio before':>20} {'ratio after':>20}")
for (op, w, d), sides in rows.items():
    if "before" not in sides or "after" not in sides:
        print(f"{op:<24} {w:<26} {d:<12} missing {sorted(sides)}")
        continue
    b, a = sides["before"][0], sides["after"][0]
    fmt = lambda s: f"{s[0]:.1f} ({s[1]:.1f}-{s[2]:.1f})"
    rat = lambda s: f"{s[3]:.2f}x ({s[4]:.2f}-{s[5]:.2f})" if s[4] is not None else f"{s[3]:.2f}x"
    print(f"{op:<24} {w:<26} {d:<12} {fmt(b):>24} {fmt(a):>24} {a[0] / b[0]:>11.3f}x  "
          f"{rat(b):>20} {rat(a):>20}")
PY
