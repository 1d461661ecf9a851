#!/usr/bin/env bash
# The run command: installs missing packages, builds, and opens the GUI on MobileNetV2.
# With no display it prints `tessera-cli inspect` of the model instead.
# Usage: ./scripts/run.sh [MODEL]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${TESSERA_BUILD_DIR:-"$root/build"}
"$root/scripts/build.sh" "$build"
model=${1:-"$root/samples/mobilenet_v2.onnx"}
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/gui/tessera" "$model"
fi
echo "No display found (DISPLAY is unset): printing the model summary instead of opening the window."
exec "$build/app/cli/tessera-cli" inspect "$model"
