#!/usr/bin/env bash
# What the lead runs on the GPU device machine (the `device` tool) for issue 5: the gpu tests,
# MobileNetV2 --target cuda --check, the fault test, then bench/gpu_bench.py. Binaries come built
# here (Debian 12, TESSERA_GUI=OFF) in .devcarry/ (git-ignored): bin/tessera-cli,
# bin/tessera-runner, bin/tessera_gpu_tests and lib/ with the shared libraries the device image
# lacks (libonnx, libonnx_proto, libprotobuf). Prepare with bench/device_pack.sh.
# Usage (on the device): bench/device_run.sh [quick|tests|bench|latency|all]   (default all)
set -uo pipefail
what=${1:-all}
here=$(cd "$(dirname "$0")/.." && pwd)
carry=$here/.devcarry
export LD_LIBRARY_PATH=$carry/lib:${LD_LIBRARY_PATH:-}
export TESSERA_RUNNER=$carry/bin/tessera-runner
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/tessera-cache}
out=${OUT:-/tmp/out}
mkdir -p "$out"
cli=$carry/bin/tessera-cli
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw --format=csv
if [ "$what" = tests ] || [ "$what" = all ] || [ "$what" = quick ]; then
  echo "== gpu tests"
  (cd "$here" && "$carry/bin/tessera_gpu_tests" 2>&1 | tail -40)
  echo "== MobileNetV2 --target cuda --check (sample input)"
  "$cli" run samples/mobilenet_v2.onnx --target cuda --check --input input=samples/mobilenet_v2_input.npy \
      --output-dir "$out/mb" 2>&1 | tail -25
  echo "rc=$?"
  python3 - "$out/mb" <<'EOF'
import sys, numpy as np, glob
got = np.load(glob.glob(sys.argv[1] + "/*.npy")[0]); want = np.load("samples/mobilenet_v2_output.npy")
print("MobileNetV2 cuda vs torch output: rel L2 =", float(np.linalg.norm(got - want) / np.linalg.norm(want)))
EOF
  echo "== every sample --target cuda --check"
  for f in samples/*.onnx samples/*.tsr; do
    printf '%s: ' "$f"; "$cli" run "$f" --target cuda --check --no-timing --fallback-reference >/dev/null 2>"$out/err.txt"; rc=$?
    echo "rc=$rc $(head -c 300 "$out/err.txt" | tr '\n' ' ')"
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  echo "== bench"
  PYTHONUNBUFFERED=1 python3 bench/gpu_bench.py "$cli" /tmp/gpubench 2>&1 | tee "$out/gpu_bench.log" | tail -40
elif [ "$what" = quick ]; then
  PYTHONUNBUFFERED=1 python3 bench/gpu_bench.py "$cli" /tmp/gpubench --quick 2>&1 | tee "$out/gpu_bench.log" | tail -30
fi
if [ -x "$carry/bin/tessera_cuda_latency_bench" ] && { [ "$what" = latency ] || [ "$what" = bench ] || [ "$what" = all ]; }; then
  echo "== edit-to-timing latency (NVRTC + load + 10 timed launches; warm runner)"
  "$carry/bin/tessera_cuda_latency_bench" --reps 20 2>&1 | tee "$out/cuda_latency.log" | tail -45
fi
