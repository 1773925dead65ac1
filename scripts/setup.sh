#!/usr/bin/env bash
# Fresh machine to working system in one command: installs every dependency (pinned), builds and
# installs the project, then runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

bash scripts/install-deps.sh
echo "== building and installing the project"
"$PYTHON" -m pip install --no-build-isolation -q . 2>&1 | grep -v "Running pip as the 'root' user" || true

echo "== main job"
tileops validate
tileops show GEMMFwdOp
