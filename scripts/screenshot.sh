#!/usr/bin/env bash
# Starts the GUI under Xvfb on a model and saves a PNG of its window.
# Usage: scripts/screenshot.sh [MODEL] [OUT.png] [extra tessera options...]   (builds first if needed)
# OUT defaults to $TMPDIR/tessera-screenshot.png; docs/screenshots/ holds the ones the README shows.
# Extra options go to tessera, e.g. `--run --target cuda` runs on the first CUDA device (or, without
# one, compiles to CUDA C and PTX only) and photographs the Code dock with both side by side.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-"$root/build"}
model=${1:-"$root/samples/mobilenet_v2.onnx"}
out=${2:-"${TMPDIR:-/tmp}/tessera-screenshot.png"}
mkdir -p "$(dirname "$out")"
[ -x "$build/app/gui/tessera" ] || "$root/scripts/build.sh" "$build"
shift 2 2>/dev/null || shift $#
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/gui/tessera" --screenshot "$out" --geometry 1600x1000 "$@" "$model"
echo "saved $out"
