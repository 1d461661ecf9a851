#!/usr/bin/env bash
# Screenshots of the GUI under Xvfb.
#
#   scripts/screenshot.sh [MODEL] [OUT.png] [extra tessera options...]
#       One PNG of the window on MODEL (default samples/mobilenet_v2.onnx; OUT defaults to
#       $TMPDIR/tessera-screenshot.png). Extra options go to tessera, e.g. `--run --target cuda`,
#       `--screenshot-dock Timings`, `--run --runs 3 --pin` (tessera --help lists them).
#   scripts/screenshot.sh --all [OUTDIR]
#       Every main view, one PNG each, into OUTDIR (default docs/images/): the graph with fusion
#       clusters, the fusion plan table, the program editor, problems, task mapping, code, roofline
#       and timings history after CPU runs, the check heatmap, a run compared with a pinned one,
#       Welcome, Preferences and About. Compressed with pngquant/optipng when installed.
#
# Builds first if needed (TESSERA_BUILD_DIR, default build/). Every shot starts with empty
# settings and data (temporary XDG_CONFIG_HOME and XDG_DATA_HOME: no saved layout, fusion plan
# edits or autosave), so pictures do not depend on earlier sessions; the JIT cache is kept.
# This CPU's roofs are measured first (tessera-cli roofline measure, ~10 s) for the rooflines.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TESSERA_BUILD_DIR:-"$root/build"}
[ -x "$build/app/gui/tessera" ] || "$root/scripts/build.sh" "$build"
export TESSERA_RUNNER=${TESSERA_RUNNER:-"$build/app/runner/tessera-runner"}

# shot OUT.png [tessera args...]: one picture, 1600x1000, fresh settings and data ($SHOT_CONFIG,
# when set, is copied in as the settings: e.g. measured roofs).
shot() {
    local out=$1
    shift
    local home
    home=$(mktemp -d)
    mkdir -p "$home/config" "$home/data" "$(dirname "$out")"
    [ -z "${SHOT_CONFIG:-}" ] || cp -r "$SHOT_CONFIG"/. "$home/config"
    local rc=0
    XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" xvfb-run -a -s "-screen 0 1600x1000x24" \
        "$build/app/gui/tessera" --screenshot "$out" --geometry 1600x1000 "$@" || rc=$?
    rm -rf "$home"
    return $rc
}

if [ "${1:-}" != "--all" ]; then
    model=${1:-"$root/samples/mobilenet_v2.onnx"}
    out=${2:-"${TMPDIR:-/tmp}/tessera-screenshot.png"}
    shift 2 2>/dev/null || shift $#
    shot "$out" "$@" "$model"
    echo "saved $out"
    exit 0
fi

out=${2:-"$root/docs/images"}
mkdir -p "$out"
samples="$root/samples"
mobilenet="$samples/mobilenet_v2.onnx"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# This CPU's roofs, for every roofline on the pictures (only the profile: no other settings).
mkdir -p "$work/roofs"
XDG_CONFIG_HOME="$work/roofs" "$build/app/cli/tessera-cli" roofline measure --target cpu --save --force \
    > "$work/roofs.log" 2>&1 || echo "roofs not measured (see the rooflines without them)"
export SHOT_CONFIG="$work/roofs"

# A program with one typo (a misspelled reducer): one error, inline and in Problems.
sed 's/sum(j) e\[i, j\]/sun(j) e[i, j]/' "$samples/softmax.tsr" > "$work/softmax_typo.tsr"

shot "$out/graph-fusion.png" --planner fuseplanner --find "Conv_4" "$mobilenet"
shot "$out/fusion-plan-table.png" --planner fuseplanner --screenshot-dock "Fusion Plan" "$mobilenet"
shot "$out/program-editor.png" "$samples/dw_pw_block.tsr"
shot "$out/problems.png" "$work/softmax_typo.tsr" || true  # exit 2: the file does not load
shot "$out/task-mapping.png" --mapping "spatial(2, 2)" --mapping-block "spatial(4, 4).repeat(2, 2)" \
    --mapping-level threads --screenshot-dock "Task Mapping" "$samples/matmul_tiled.tsr"
shot "$out/code.png" --run --screenshot-dock Code "$mobilenet"
shot "$out/roofline.png" --run --screenshot-dock Roofline "$mobilenet"
shot "$out/timings-history.png" --run --runs 3 --screenshot-dock Timings "$mobilenet"
TESSERA_DEBUG_CORRUPT_KERNEL=C shot "$out/check-heatmap.png" --run "$samples/matmul_tiled.tsr" || true
shot "$out/compare-pinned.png" --run --runs 2 --pin "$samples/dw_pw_block.onnx"
shot "$out/welcome.png"
shot "$out/settings.png" --screenshot-dock preferences "$samples/dw_pw_block.onnx"
shot "$out/about.png" --screenshot-dock about "$samples/dw_pw_block.onnx"

if command -v pngquant > /dev/null; then
    pngquant --force --skip-if-larger --quality 70-95 --ext .png "$out"/*.png || true
fi
if command -v optipng > /dev/null; then
    optipng -quiet -o2 "$out"/*.png
fi
du -ch "$out"/*.png | tail -1
