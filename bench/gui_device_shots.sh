#!/usr/bin/env bash
# Screenshots of the GUI on a CUDA machine without Qt (the GPU device machine), from the bundle
# that scripts/gui_bundle.sh writes; run from the repository root.
#
#   bench/gui_device_shots.sh BUNDLE.tar.xz [OUTDIR]   (OUTDIR defaults to $OUT, else /tmp/out)
#
# Unpacks the bundle, measures the GPU's roofs once (tessera-cli roofline measure --target cuda
# --save, unless a profile is saved already), then runs samples/mobilenet_v2.onnx on the first
# CUDA device with the check against the reference interpreter and photographs (1600x1000,
# offscreen): the window after three runs, the Roofline dock's Performance and Energy tabs, the
# Code dock (CUDA C beside its PTX), the Check and Timings docks. Then tessera_gpu_tests, when the
# bundle has it, with the time left (BUDGET_S, default 540 s, for the whole script). Every stage is under `timeout`; everything is logged to OUTDIR/device.log.
set -uo pipefail
bundle=${1:?usage: bench/gui_device_shots.sh BUNDLE.tar.xz [OUTDIR]}
out=${2:-${OUT:-/tmp/out}}
model=${MODEL:-samples/mobilenet_v2.onnx}
deadline=$((SECONDS + ${BUDGET_S:-540}))
mkdir -p "$out"
log=$out/device.log
exec > >(tee -a "$log") 2>&1

work=$(mktemp -d)
tar -C "$work" -xJf "$bundle" || exit 1
run=$work/tessera-gui/run
# A fresh home: no saved settings or layout; the roofs measured below and the JIT cache are shared.
export HOME=$work/home XDG_CONFIG_HOME=$work/home/config XDG_DATA_HOME=$work/home/data XDG_CACHE_HOME=$work/home/cache
export XDG_RUNTIME_DIR=$work/home/runtime
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

stage() { echo "=== $* ($((deadline - SECONDS)) s left)"; }
left() { local l=$((deadline - SECONDS - ${1:-0})); [ $l -gt 5 ] && echo $l || echo 5; }

stage gpu
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
stage help
timeout 60 "$run" tessera --version

stage roofs
if ! ls "$XDG_CONFIG_HOME"/tessera/profiles/cuda* > /dev/null 2>&1; then
    timeout "$(left 330)" "$run" tessera-cli roofline measure --target cuda --save ||
        timeout "$(left 270)" "$run" tessera-cli roofline measure --target cuda --quick --save --force
fi
ls -l "$XDG_CONFIG_HOME"/tessera/profiles/ 2>&1

shot() {  # shot NAME [tessera args...]
    local name=$1
    shift
    stage "shot $name: $*"
    timeout "$(left 60)" "$run" tessera --screenshot "$out/$name.png" --geometry 1600x1000 --run --target cuda "$@" "$model"
    echo "exit $?"
}
shot gpu_run_timings --runs 3
shot gpu_roofline --screenshot-dock Roofline
shot gpu_code_ptx --screenshot-dock Code
QT_QPA_GENERIC_PLUGINS=tesseratab:Energy shot gpu_energy --screenshot-dock Roofline
shot gpu_check --screenshot-dock Check
shot gpu_timings --runs 3 --screenshot-dock Timings

if [ -x "$work/tessera-gui/bin/tessera_gpu_tests" ]; then
    stage gputests
    timeout "$(left 10)" "$run" tessera_gpu_tests > "$out/gputests.log" 2>&1
    echo "exit $?"
    tail -40 "$out/gputests.log"
fi
stage done
ls -l "$out"
