#!/usr/bin/env bash
# What the lead runs on the GPU device machine (the `device` tool) for issue 5: the gpu tests,
# MobileNetV2 --target cuda --check, the fault test, then bench/gpu_bench.py. Binaries come built
# here (Debian 12, TESSERA_GUI=OFF) in .devcarry/ (git-ignored): bin/tessera-cli,
# bin/tessera-runner, bin/tessera_gpu_tests and lib/ with the shared libraries the device image
# lacks (libonnx, libonnx_proto, libprotobuf). Prepare with bench/device_pack.sh.
# Usage (on the device): bench/device_run.sh [quick|tests|bench|latency|roofline|ncu|verify|fusion|fusioncheck|all] [extra args]
# fusion: bench/fusion_bench.py (issue 6; extra args e.g. --quick --ncu); fusioncheck: every sample under each planner, --check.
# verify: the gpu tests, latency, roofs and energy, each under a time limit, logs in $OUT.
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
if [ "$what" = roofline ] || [ "$what" = all ]; then
  echo "== roofline measure --target cuda (issue 7)"
  "$cli" roofline measure --target cuda --json >"$out/roofs_cuda.json" 2>"$out/roofs_cuda.err"; echo "rc=$?"
  "$cli" roofline measure --target cuda 2>&1 | tail -30
  echo "== energy: MobileNetV2 per-kernel joules"
  "$cli" run samples/mobilenet_v2.onnx --target cuda --json >"$out/mb_energy.json" 2>&1; echo "rc=$?"
  python3 - "$out/mb_energy.json" <<'EOF2'
import json, sys
j = json.load(open(sys.argv[1]))
ks = [k for k in j.get("kernels", []) if "energy_j" in k]
print("kernels with energy:", len(ks), "of", len(j.get("kernels", [])))
for k in sorted(ks, key=lambda k: -k["energy_j"])[:5]:
    print("  %-45s %10.3e J/run %7.1f W %8.2f GFLOP/J" % (k["name"][-45:], k["energy_j"], k["avg_power_w"], k.get("gflop_per_j", 0)))
EOF2
fi
if [ "$what" = ncu ] || [ "$what" = all ]; then
  echo "== ncu DRAM/L2 bytes vs Tessera's counts (issue 7 accuracy)"
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
  if [ -n "$NCU" ] && [ -f /tmp/gpubench/dw3x3.onnx ]; then
    for m in dw3x3:X=/tmp/gpubench/X.npy matmul4096:A=/tmp/gpubench/A.npy; do
      name=${m%%:*}; inp=${m#*:}
      [ "$name" = matmul4096 ] && inp="$inp --input B=/tmp/gpubench/B.npy"
      "$cli" run /tmp/gpubench/$name.onnx --target cuda --no-timing --json --input $inp >"$out/ncu_${name}_tessera.json" 2>/dev/null
      timeout 200 "$NCU" --clock-control none --target-processes all --kernel-name regex:tk_ --launch-count 1 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum \
        --csv "$cli" run /tmp/gpubench/$name.onnx --target cuda --no-timing --input $inp >"$out/ncu_${name}.csv" 2>&1
      echo "-- $name"; grep -E "dram__|lts__|ffma" "$out/ncu_${name}.csv" | cut -c1-220
      python3 -c "import json,sys; j=json.load(open('$out/ncu_${name}_tessera.json')); [print('tessera', k['name'], 'bytes', k['bytes'], 'compulsory', k['compulsory_bytes'], 'flops', k['flops']) for k in j['kernels']]"
    done
  else
    echo "ncu or the bench models missing: skipped"
  fi
fi
if [ "$what" = verify ]; then
  t() { local lim=$1 name=$2; shift 2; echo "== $name"; timeout "$lim" "$@" >"$out/$name.log" 2>&1; echo "rc=$?"; tail -n 25 "$out/$name.log"; }
  t 120 gpu_tests "$carry/bin/tessera_gpu_tests"
  t 60 latency "$carry/bin/tessera_cuda_latency_bench" --reps 20
  t 60 roofs "$cli" roofline measure --target cuda --quick
  t 60 mb_b1 "$cli" run samples/mobilenet_v2.onnx --target cuda --check --input input=samples/mobilenet_v2_input.npy
fi
if [ "$what" = fusioncheck ]; then
  echo "== every sample --target cuda --check under each planner (issue 6)"
  for plan in hidet fuseplanner; do
    for f in samples/*.onnx samples/*.tsr samples/external_data/model.onnx; do
      printf '%s %s: ' "$plan" "$f"
      timeout 120 "$cli" run "$f" --target cuda --check --no-timing --fallback-reference --plan $plan --json >"$out/fc.json" 2>"$out/err.txt"; rc=$?
      python3 -c "import json,sys; j=json.load(open('$out/fc.json')); print('rc=$rc kernels', len(j.get('kernels',[])), 'fused', j.get('plan',{}).get('fused_groups'), 'all_passed', j.get('all_passed'))" 2>/dev/null || echo "rc=$rc"
      grep -i "warning\|error" "$out/err.txt" | head -3
    done
  done
  "$cli" run samples/mobilenet_v2.onnx --target cuda --check --plan fuseplanner --input input=samples/mobilenet_v2_input.npy --output-dir "$out/mbf" 2>&1 | tail -5
  python3 - "$out/mbf" <<'EOF3'
import sys, numpy as np, glob
got = np.load(glob.glob(sys.argv[1] + "/*.npy")[0]); want = np.load("samples/mobilenet_v2_output.npy")
print("MobileNetV2 cuda fuseplanner vs torch output: rel L2 =", float(np.linalg.norm(got - want) / np.linalg.norm(want)))
EOF3
fi
if [ "$what" = fusion ]; then
  echo "== fusion bench (issue 6)"
  PYTHONUNBUFFERED=1 timeout ${FUSION_TIMEOUT:-560} python3 bench/fusion_bench.py "$cli" /tmp/fusionbench ${2:-} ${3:-} 2>&1 | tee "$out/fusion_bench.log" | tail -60
fi
