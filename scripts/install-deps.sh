#!/usr/bin/env bash
# Installs the Debian 12 packages Tessera needs to build, test and take screenshots.
# Only missing packages are installed; needs root or sudo when something is missing.
# libonnx-testdata (ONNX 1.12 backend node tests, ~6 MB download, ~21 MB installed under
# /usr/share/libonnx-testdata) feeds `tessera-cli conformance` and the conformance tests.
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config
      qt6-base-dev qt6-svg-dev libqcustomplot-dev libgraphviz-dev
      libonnx-dev libprotobuf-dev protobuf-compiler
      nlohmann-json3-dev libcli11-dev libgtest-dev
      libonnx-testdata
      xvfb xauth imagemagick fonts-dejavu-core)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing missing packages: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
