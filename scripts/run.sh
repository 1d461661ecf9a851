#!/usr/bin/env bash
# The run command: installs missing packages, builds, and opens the GUI on MobileNetV2.
# With no display it prints `tessera-cli inspect` of the model instead.
# Usage: ./scripts/run.sh [MODEL]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
build=${TESSERA_BUILD_DIR:-"$root/build"}
# Only what opening the app needs (the tests and benchmarks are about half of the build;
# ./scripts/test.sh builds them).
if [ "${TESSERA_GUI:-ON}" = OFF ]; then
  TESSERA_TARGETS=${TESSERA_TARGETS:-"tessera-cli tessera-runner"}
else
  TESSERA_TARGETS=${TESSERA_TARGETS:-"tessera tessera-cli tessera-runner"}
fi
export TESSERA_TARGETS
"$root/scripts/build.sh" "$build"
model=${1:-"$root/samples/mobilenet_v2.onnx"}
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$build/app/gui/tessera" "$model"
fi
echo "No display found (DISPLAY is unset): printing the model summary instead of opening the window."
status=0
"$build/app/cli/tessera-cli" inspect "$model" || status=$?
cat >&2 <<EOM

No display found (DISPLAY is unset), so the window was not opened; the model summary is above.
To open the window: run ./scripts/run.sh in a desktop session, over 'ssh -X', or on a virtual
display: xvfb-run -a -s "-screen 0 1600x1000x24" ./scripts/run.sh (pictures of it:
scripts/screenshot.sh --all). Everything the window does also works from $build/app/cli/tessera-cli.
EOM
exit "$status"
