#!/usr/bin/env bash
# Import and layout benchmarks for issue 2, with the peer (onnx Python package: onnx.load +
# onnx.shape_inference.infer_shapes) in the same run. Needs a built tree (scripts/build.sh) and
# `pip install onnx numpy` for the peer and the synthetic chains.
# Usage: bench/run_import_layout.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$root/bench/make_chain_models.py" "$tmp" 1000 5000 >/dev/null
models=("$root/samples/mobilenet_v2.onnx" "$tmp/chain_1000.onnx" "$tmp/chain_5000.onnx")
"$build/bench/import_bench" "${models[@]}" | tee "$tmp/ours.txt"
python3 "$root/bench/peer_import.py" "${models[@]}" > "$tmp/peer.txt"
QT_QPA_PLATFORM=offscreen "$build/bench/layout_bench" "${models[@]}" 2>/dev/null | tee "$tmp/layout.txt"
echo
printf "%-22s %12s %14s %8s %12s %14s %14s\n" model "tessera ms" "onnx-py ms" ratio "layout ms" "session ms" "UI gap ms"
for m in "${models[@]}"; do
  ours=$(awk -v m="$m" '$1=="RESULT" && $2=="import" && $3==m {print $4}' "$tmp/ours.txt")
  peer=$(awk -v m="$m" '$1=="RESULT" && $2=="import" && $3==m {print $4}' "$tmp/peer.txt")
  lay=$(awk -v m="$m" '$1=="RESULT" && $2=="layout" && $3==m {print $4}' "$tmp/layout.txt")
  ses=$(awk -v m="$m" '$1=="RESULT" && $2=="session" && $3==m {print $4}' "$tmp/layout.txt")
  gap=$(awk -v m="$m" '$1=="RESULT" && $2=="session" && $3==m {print $8}' "$tmp/layout.txt")
  ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN{printf "%.2f", a/b}')
  printf "%-22s %12s %14s %8s %12s %14s %14s\n" "$(basename "$m")" "$ours" "$peer" "$ratio" "$lay" "$ses" "$gap"
done
