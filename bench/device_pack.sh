#!/usr/bin/env bash
# Packs what bench/device_run.sh needs on the GPU device machine into .devcarry/ (git-ignored):
# the GUI-less binaries of BUILD_DIR and the shared libraries they need that the device image
# (Ubuntu 24.04, CUDA 13, no ONNX C++ library) lacks.
# Usage: bench/device_pack.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: bench/device_pack.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
dst=$root/.devcarry
grep -qx '/.devcarry/' "$root/.git/info/exclude" 2>/dev/null || echo '/.devcarry/' >>"$root/.git/info/exclude"
rm -rf "$dst"
mkdir -p "$dst/bin" "$dst/lib"
cp "$build/app/cli/tessera-cli" "$build/app/runner/tessera-runner" "$dst/bin/"
[ -f "$build/tests/tessera_gpu_tests" ] && cp "$build/tests/tessera_gpu_tests" "$dst/bin/"
[ -f "$build/bench/tessera_cuda_latency_bench" ] && cp "$build/bench/tessera_cuda_latency_bench" "$dst/bin/"
for lib in libonnx.so.1 libonnx_proto.so.1 libprotobuf.so.32; do
  p=$(ldd "$dst/bin/tessera-cli" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$p" ] && cp -L "$p" "$dst/lib/"
done
strip --strip-debug "$dst"/bin/* 2>/dev/null || true
du -sh "$dst"
