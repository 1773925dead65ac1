#!/usr/bin/env bash
# Installs every build and test dependency, pinned. Idempotent: a second run that finds
# everything in place returns in about a second.
#
# Debian packages come from bookworm (their versions are fixed by the release); Python packages
# are pinned exactly below. torch must match the GPU machine (2.11.x) because Tilesmith touches
# Inductor internals.
set -euo pipefail

APT_PACKAGES=(
  g++ cmake ninja-build ccache clang-format pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libcpp-httplib-dev
  libcli11-dev libfmt-dev libspdlog-dev libexpected-dev libdlpack-dev
  bubblewrap
)
PY_PACKAGES=(
  torch==2.11.0
  numpy==2.3.5
  nanobind==3.1.0
  scikit-build-core==1.1.2
  pytest==9.2.0
  nvidia-cutlass==4.2.0.0
)
PYTHON=${PYTHON:-python3}

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[install-deps] apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

need_pip=()
for spec in "${PY_PACKAGES[@]}"; do
  name=${spec%%==*}; want=${spec##*==}
  have=$("$PYTHON" -m pip show "$name" 2>/dev/null | sed -n "s/^Version: //p" || true)
  # torch reports a local tag (2.11.0+cu130); compare the public part only.
  [ "${have%%+*}" = "$want" ] || need_pip+=("$spec")
done
if ((${#need_pip[@]})); then
  echo "[install-deps] pip install ${need_pip[*]}"
  "$PYTHON" -m pip install -q "${need_pip[@]}"
fi
echo "[install-deps] all dependencies present"
