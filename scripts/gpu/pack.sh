#!/usr/bin/env bash
# Builds, on this (CPU) machine, everything the GPU machine needs to run the project, into .gpu/
# (git-ignored), so a device run only installs and runs:
#   .gpu/*.whl      tileops and tilesmith-ai built for the GPU machine's Python 3.12 (CUDA kernels
#                   included)
#   .gpu/lib/       the shared libraries the extensions link beyond glibc/libstdc++ (the GPU
#                   image has no Debian dev packages); put it on LD_LIBRARY_PATH there
#   .gpu/cutlass/   CUTLASS/CuTe headers from the nvidia-cutlass wheel, for builds done there
#   .gpu/bin/bwrap  bubblewrap, the sandbox of the gate's workers and the agent's shell (its
#                   libraries go to .gpu/lib), in case the GPU image has none
# On the GPU machine:  source scripts/gpu/env.sh   (installs the wheel into /tmp/site)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY312=${PY312:-/root/.pyenv/versions/3.12.1/bin/python3.12}
"$PY312" -m pip install -q nanobind==3.1.0 scikit-build-core==1.1.2 nvidia-cutlass==4.2.0.0 2>&1 | grep -v "Running pip as" || true
rm -rf .gpu/*.whl .gpu/lib
mkdir -p .gpu/lib
"$PY312" -m pip wheel -q --no-build-isolation --no-deps ./packaging/tileops ./packaging/tilesmith-ai \
  -w .gpu 2>&1 | grep -v "Running pip as" || true
ls .gpu/tileops-*.whl .gpu/tilesmith_ai-*.whl >/dev/null
# Every shared library our extensions need that is not part of the base system.
tmp=$(mktemp -d)
for whl in .gpu/*.whl; do unzip -q -o "$whl" -d "$tmp"; done
find "$tmp" -name '*.so' -print0 | xargs -0 ldd 2>/dev/null | awk '/=>/ {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s|ld-linux)[.-]' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
rm -rf "$tmp"
mkdir -p .gpu/bin
cp -L "$(command -v bwrap)" .gpu/bin/bwrap
ldd .gpu/bin/bwrap | awk '/=>/ {print $3}' | grep -E '/lib(cap|selinux|pcre2-8)\.' |
  while read -r lib; do cp -L "$lib" .gpu/lib/; done
if [ "${WITH_CUTLASS:-0}" = 1 ]; then
  src=$(python3 -c "import cutlass_library, os; print(os.path.dirname(cutlass_library.__file__))")/source
  rm -rf .gpu/cutlass && mkdir -p .gpu/cutlass
  cp -r "$src/include" .gpu/cutlass/include
  cp -r "$src/tools/util/include" .gpu/cutlass/util-include
fi
du -sh .gpu
ls .gpu .gpu/lib
