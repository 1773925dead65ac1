#!/usr/bin/env bash
# TileOPs on the GPU machine, run through the device tool with
# carry: [".devdeps", ".cutlass"] (made here by scripts/gpu/tileops-carry.sh):
#
#   scripts/gpu/tileops.sh [build|test|bench|all]        (default: all; phases reuse build/)
#
#   build  installs the package (pip install --no-build-isolation --no-deps) into build/gpu-site,
#          compiling tileops._core and the CUDA launchers tileops._tskernels for sm_90a. The image has no
#          Debian dev packages: the carried .debs are unpacked into /tmp/tileops-devroot (never
#          into /), preferring the image's own libcurl / libcrypto at run time.
#   test   pytest -m gpu over tests/python: the contract tests (values against the fp64 references
#          per dtype and layout, awkward sizes, tuned configs and their on-disk cache, CUDA-graph
#          capture and replay, torch.compile(fullgraph=True)) and an end-to-end `tileops bench`;
#          then the CPU-level tests and `tileops validate` against this build.
#   bench  `tileops bench` over every implemented op, workload row and dtype (extra arguments
#          from $TILEOPS_BENCH_ARGS, e.g. "--tune" or "--op GEMMFwdOp").
#
# `all` may not fit one 10-minute call (the CUTLASS kernels compile in build): run build, test and
# bench as three calls on the same warm machine (build/ is kept between calls).
#
# Into $OUT (at most 8 files): env.txt, build.log, pytest.log, validate.log, bench.log,
# bench.json, roofline.png (or .svg).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-build/gpu-out}"
mkdir -p "$out"
phase="${1:-all}"
site="$PWD/build/gpu-site"
devroot=/tmp/tileops-devroot
arch=x86_64-linux-gnu

setup_devroot() {
  [ -d .devdeps ] || { echo "no .devdeps: building against the image's own dev packages"; return; }
  if [ ! -f "$devroot/.done" ]; then
    rm -rf "$devroot" && mkdir -p "$devroot"
    for f in .devdeps/*.deb; do
      if command -v dpkg > /dev/null; then
        dpkg -x "$f" "$devroot"
      else  # a .deb is an ar archive holding data.tar.{xz,zst,gz}
        (cd "$devroot" && ar x "$OLDPWD/$f" && tar -xf data.tar.* && rm -f data.tar.* control.tar.* debian-binary)
      fi
    done
    # Where the image has its own libcurl / libssl / libcrypto, link against those and run with
    # them (one OpenSSL per process); the carried ones only fill gaps.
    libdir="$devroot/usr/lib/$arch"
    for so in libcurl.so.4 libcrypto.so.3 libssl.so.3; do
      sys=$(ldconfig -p | awk -v n="$so" '$1 == n && /x86-64/ {print $NF; exit}')
      if [ -n "$sys" ]; then
        rm -f "$libdir/$so" "$libdir/$so".*
        ln -sf "$sys" "$libdir/${so%.*}"
      fi
    done
    touch "$devroot/.done"
  fi
  export CMAKE_PREFIX_PATH="$devroot/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export CPATH="$devroot/usr/include/$arch:$devroot/usr/include${CPATH:+:$CPATH}"
  export LIBRARY_PATH="$devroot/usr/lib/$arch${LIBRARY_PATH:+:$LIBRARY_PATH}"
  export LD_LIBRARY_PATH="$devroot/usr/lib/$arch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

setup_env() {
  setup_devroot
  [ -d .cutlass/include/cute ] && export TS_CUTLASS_DIR="$PWD/.cutlass/include"
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
  export TILESMITH_CACHE_DIR="$PWD/build/gpu-cache"
  export PYTHONUNBUFFERED=1
}

do_build() {
  {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
    python3 -c "import sys, torch; print(sys.version); print('torch', torch.__version__, torch.version.cuda)"
    nvcc --version | tail -1
    python3 -m pip show scikit-build-core nanobind 2>/dev/null | grep -E '^(Name|Version)'
  } > "$out/env.txt" 2>&1
  rm -rf "$site"
  python3 -m pip install --no-build-isolation --no-deps --no-compile -v --target "$site" ./packaging/tileops ./packaging/tilesmith-ai \
    > "$out/build.log" 2>&1
  local rc=$?
  for m in "$site"/tileops/_core*.so "$site"/tileops/_tskernels*.so; do
    echo "== ldd $m" >> "$out/env.txt"; ldd "$m" >> "$out/env.txt" 2>&1
  done
  python3 -c "from tileops import _tskernels; print('built kernels:', sorted(_tskernels.kernels()))" \
    >> "$out/env.txt" 2>&1
  if [ "$rc" != 0 ]; then tail -60 "$out/build.log"; fi
  return $rc
}

do_test() {
  python3 -m pytest -q -m gpu -p no:cacheprovider -o addopts="" tests/python -rfE \
    > "$out/pytest.log" 2>&1
  local rc=$?
  python3 -m pytest -q -m "not gpu" -p no:cacheprovider tests/python >> "$out/pytest.log" 2>&1
  local cpu_rc=$?
  python3 -m tileops.cli validate > "$out/validate.log" 2>&1
  local val_rc=$?
  tail -25 "$out/pytest.log"
  cat "$out/validate.log"
  echo "pytest gpu exit=$rc, cpu exit=$cpu_rc, validate exit=$val_rc"
  [ "$rc" = 0 ] && [ "$cpu_rc" = 0 ] && [ "$val_rc" = 0 ]
}

do_bench() {
  # shellcheck disable=SC2086
  python3 -m tileops.cli bench --json "$out/bench.json" --plot "$out/roofline.png" \
    ${TILEOPS_BENCH_ARGS:-} > "$out/bench.log" 2>&1
  local rc=$?
  cat "$out/bench.log"
  echo "tileops bench exit=$rc"
  return $rc
}

setup_env
case "$phase" in
  build) do_build ;;
  test) do_test ;;
  bench) do_bench ;;
  all) do_build && { do_test; t=$?; do_bench; b=$?; [ "$t" = 0 ] && [ "$b" = 0 ]; } ;;
  *) echo "usage: $0 [build|test|bench|all]" >&2; exit 2 ;;
esac
