#!/usr/bin/env bash
# Fresh machine to working system in one command: installs every dependency (pinned), builds and
# installs the project, then runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

bash scripts/install-deps.sh
echo "== building and installing the project"
bash scripts/install-project.sh

echo "== main job"
tileops validate
"$PYTHON" examples/quickstart.py
if "$PYTHON" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "== short benchmark (a CUDA GPU is present): first workload of each op, vs the strongest baseline"
  tileops bench --quick --no-compile
else
  echo "== no CUDA GPU on this machine: skipping 'tileops bench' (run it where a GPU is: tileops bench [--op NAME])"
fi
