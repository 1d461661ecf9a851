#!/usr/bin/env bash
# The model zoo on the GPU device machine (the `device` tool): binaries from bench/device_pack.sh
# in .devcarry/. Every stage runs under `timeout` and logs to $OUT.
# Usage (on the device): bench/zoo/device_zoo.sh [gputests] [check] [perf1] [perf32] [models=a,b] [planners=x,y]
#                                               [tag=name] [extra="--no-peers ..."]
#   gputests  tessera_gpu_tests
#   check     every tests/zoo model under every planner on the H200, against torch's outputs
#   perf1/32  the large zoo at batch 1 / 32: eager, torch.compile and Tessera per planner; logs
#             perf<batch><tag>.log and Tessera's JSON reports under json<tag>/ (per-kernel times);
#             extra: more zoo_bench.py perf arguments (e.g. --no-peers)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
carry=$here/.devcarry
export LD_LIBRARY_PATH=$carry/lib:${LD_LIBRARY_PATH:-}
export TESSERA_RUNNER=$carry/bin/tessera-runner
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/tessera-cache}
export PYTHONUNBUFFERED=1
out=${OUT:-/tmp/out}
mkdir -p "$out"
cli=$carry/bin/tessera-cli
models=""
planners=none,hidet,fuseplanner
tag=""
extra=""
for a in "$@"; do
  case $a in
  models=*) models=${a#models=} ;; planners=*) planners=${a#planners=} ;;
  tag=*) tag=${a#tag=} ;; extra=*) extra=${a#extra=} ;;
  esac
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
for stage in "$@"; do
  case $stage in
  gputests)
    (cd "$here" && timeout 300 "$carry/bin/tessera_gpu_tests" 2>&1 | tail -60) | tee "$out/gputests.log" ;;
  check)
    timeout 560 python3 "$here/bench/zoo/zoo_bench.py" check --cli "$cli" --manifest "$here/tests/zoo/manifest.json" \
      --target cuda --jobs 8 --planners "$planners" --models "$models" 2>&1 | tee "$out/check.log" ;;
  perf1|perf32)
    b=${stage#perf}
    # shellcheck disable=SC2086
    timeout 560 python3 "$here/bench/zoo/zoo_bench.py" perf --cli "$cli" --batch "$b" --models "$models" \
      --planners "$planners" --save "$out/json$tag" $extra 2>&1 | grep --line-buffered -v -i warning | tee "$out/perf$b$tag.log" ;;
  esac
done
