#!/usr/bin/env bash
# Run HERE (the build machine, with network) before scripts/gpu/tileops.sh: gathers what the GPU
# machine's image lacks for building the package, into two git-ignored folders that the `run`
# call carries (carry: [".devdeps", ".cutlass"]):
#   .devdeps/*.deb   bookworm's dev packages for yaml-cpp, fmt, nlohmann-json, tl-expected, libcurl
#                    and OpenSSL headers (+ the yaml-cpp / fmt / curl / ssl runtime libraries)
#   .cutlass/include the CUTLASS and CuTe headers of the pinned nvidia-cutlass wheel
# About 35 MiB together (the carry limit is 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .devdeps
(cd .devdeps && apt-get download libyaml-cpp-dev libyaml-cpp0.7 libfmt-dev libfmt9 \
  nlohmann-json3-dev libexpected-dev libcurl4-openssl-dev libcurl4 libssl-dev libssl3)
inc=$(python3 -c "import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), 'source', 'include'))")
rm -rf .cutlass && mkdir -p .cutlass/include
cp -r "$inc/cute" "$inc/cutlass" .cutlass/include/
du -sh .devdeps .cutlass
