#!/usr/bin/env bash
# Configures and builds Tessera. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Environment: TESSERA_GUI=ON|OFF (default ON), TESSERA_JOBS (default: number of cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
gui=${TESSERA_GUI:-ON}
jobs=${TESSERA_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_GUI="$gui" "$@" >/dev/null
cmake --build "$build" -j "$jobs"
