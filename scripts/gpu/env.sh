# Sourced on the GPU machine (from the repository root) after scripts/gpu/pack.sh ran here and
# `.gpu` was carried: installs the prebuilt wheel into /tmp/site and points Python and the
# loader at it.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site --upgrade .gpu/*.whl 2>&1 | grep -v "Running pip as" || true
export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/tmp/site/bin:$PATH
export PYTHONUNBUFFERED=1
# The GPU image may lack bubblewrap: use the one pack.sh carried unless the machine has its own.
if ! command -v bwrap >/dev/null && [ -x .gpu/bin/bwrap ]; then export TILESMITH_BWRAP=$PWD/.gpu/bin/bwrap; fi
