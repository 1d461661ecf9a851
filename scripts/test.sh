#!/usr/bin/env bash
# The test command: installs missing packages, builds, and runs every test with CTest.
# Usage: ./scripts/test.sh   (TESSERA_GUI=OFF to build and test without Qt)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${TESSERA_BUILD_DIR:-"$root/build"}
"$root/scripts/build.sh" "$build"
cd "$build"
QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j "$(nproc)" --timeout 600
