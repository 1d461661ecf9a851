#!/usr/bin/env bash
# Configures and builds Tessera. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# Environment: TESSERA_GUI=ON|OFF (default ON), TESSERA_JOBS (default: number of cores),
# TESSERA_TARGETS (space-separated build targets; default: everything, tests and benchmarks too).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
shift || true
gui=${TESSERA_GUI:-ON}
jobs=${TESSERA_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_GUI="$gui" "$@" >/dev/null
targets=()
for t in ${TESSERA_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
