#!/usr/bin/env bash
# Issue 6 (dw-pw at batch 32): Nsight Compute on the fused dw-pw GEMM kernels of chosen MobileNetV2
# blocks, on the device machine. Needs the block models and inputs bench/dwpw_sweep.py wrote into
# WORK_DIR (run the sweep for those blocks first) and .devcarry (bench/device_pack.sh).
# For each TAG (e.g. b32_c960_h7_s1_k160): one launch of the kernel under `ncu --set full`
# (clocks left alone), the report in $OUT/TAG.ncu-rep, and a summary (time, SOL, occupancy, warp
# stall reasons, shared-memory wavefronts) on stdout; plus the kernel's SASS in $OUT/TAG.sass.
# Usage: bench/dwpw_profile.sh WORK_DIR TAG... (environment as for a tessera-cli run, e.g.
# TESSERA_DWPW_GEMM to profile another tile)
set -uo pipefail
work=${1:?usage: bench/dwpw_profile.sh WORK_DIR TAG...}
shift
here=$(cd "$(dirname "$0")/.." && pwd)
carry=$here/.devcarry
export LD_LIBRARY_PATH=$carry/lib:${LD_LIBRARY_PATH:-}
export TESSERA_RUNNER=$carry/bin/tessera-runner
out=${OUT:-/tmp/out}
cli=$carry/bin/tessera-cli
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
for tag in "$@"; do
  model=$work/block_$tag.onnx
  # (the device tool returns at most 8 files from $OUT: keep logs few, or pass PROFILE_SASS=0)
  [ "${PROFILE_SASS:-1}" = 0 ] ||
    "$cli" compile "$model" --target cuda --plan "$work/plan.json" --emit sass >"$out/$tag${PROFILE_SUFFIX:-}.sass" 2>&1
  timeout 120 "$ncu" --clock-control none --target-processes all -k regex:tk_ -c 1 --set full \
    -o "$out/$tag${PROFILE_SUFFIX:-}" -f "$cli" run "$model" --target cuda --plan "$work/plan.json" \
    --input "x=$work/x_$tag.npy" --output-dir /tmp/prof_out >/dev/null 2>/tmp/ncu_err.txt || tail -5 /tmp/ncu_err.txt
  echo "== $tag${PROFILE_SUFFIX:-}"
  "$ncu" --import "$out/$tag${PROFILE_SUFFIX:-}.ncu-rep" --page details --print-units base 2>&1 |
    grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit|L2 Hit|Issued Ipc|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Block Limit|Waves Per SM|Executed Ipc|Shared.*Bank|One or More|DRAM Throughput|SM Busy|Mem Busy|Max Bandwidth|Issue Slots Busy|cycles being stalled|stall" | sed 's/  */ /g'
  "$ncu" --import "$out/$tag${PROFILE_SUFFIX:-}.ncu-rep" --page raw --print-units base 2>&1 |
    grep -E "smsp__average_warp(s_issue_stalled|_latency_issue_stalled)_[a-z_]+_per_issue_active.ratio|smsp__pcsamp_warps_issue_stalled_[a-z_]+ |l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum |l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_(ld|st).sum |smsp__inst_executed_op_shared_ld.sum |smsp__inst_executed.sum |sm__cycles_elapsed.avg |smsp__sass_thread_inst_executed_op_ffma_pred_on.sum " |
    awk '$NF != 0 && $NF != "0" {print $1, $(NF)}' | sort -k2 -g -r | head -40
done
