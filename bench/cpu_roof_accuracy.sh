#!/usr/bin/env bash
# CPU roof accuracy (Tessera issue 7, "Accuracy"): Tessera's measured CPU roofs against
# independent references on the same machine, in the same run:
#   1. tessera-cli roofline measure --target cpu --json      -> DRAM roofs (2 threads) and FP32 FMA peak (1, N threads)
#   2. bench/stream_triad.c (cc -O3 -march=native -fopenmp)   -> STREAM-style triad, N threads, 3 x 80 MB arrays,
#      in double (STREAM's type) and float (-DTRIAD_FLOAT, the element type of Tessera's triad)
#   3. bench/cpu_freq.c (dependent add chain, pinned per CPU)  -> GHz, hence the theoretical FP32 peak
#      cores x SIMD lanes (FP32) x 2 (FMA) x FMA units x GHz
#
# Usage: bench/cpu_roof_accuracy.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR holds tessera-cli and tessera-runner (app/cli/, app/runner/ or bin/; build targets
#   tessera-cli and tessera-runner).
#   OUT_DIR defaults to out/cpu_roof_accuracy/<UTC time> (ignored by git).
# Environment:
#   RUNS=2           measurements (each: freq, Tessera roofs, triad), every one after a quiet check
#   MAX_LOAD=1.5     the 1-minute load average must be below this before each measurement
#   MAX_WAIT=1200    seconds to wait for a quiet machine before giving up (exit 3)
#   FMA_UNITS=2      FMA pipes per core assumed in the theoretical peak (2 on current x86 server cores)
#   TRIAD_MB=80      MB (10^6 bytes) per triad array;  TRIAD_REPS=20
#   CC=cc
# Output: OUT_DIR/run<N>/{tessera.json,triad.json,triad_f32.json,freq.json,load.txt,*.err}, OUT_DIR/machine.txt and
# OUT_DIR/table.md (the markdown table, also printed).
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 BUILD_DIR [OUT_DIR]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${2:-$ROOT/out/cpu_roof_accuracy/$(date -u +%Y%m%dT%H%M%SZ)}
RUNS=${RUNS:-2}
MAX_LOAD=${MAX_LOAD:-1.5}
MAX_WAIT=${MAX_WAIT:-1200}
FMA_UNITS=${FMA_UNITS:-2}
TRIAD_MB=${TRIAD_MB:-80}
TRIAD_REPS=${TRIAD_REPS:-20}
CC=${CC:-cc}
find_exe() {  # $1 = name; the build tree puts it under app/<dir>/ (or bin/ in other layouts)
    local f
    for f in "$BUILD/bin/$1" "$BUILD/app/cli/$1" "$BUILD/app/runner/$1"; do
        [[ -x $f ]] && { echo "$f"; return; }
    done
    echo "$BUILD/bin/$1"
}
CLI=$(find_exe tessera-cli)
RUNNER=$(find_exe tessera-runner)
for f in "$CLI" "$RUNNER"; do
    [[ -x $f ]] || { echo "$0: $f not found (build targets tessera-cli and tessera-runner)" >&2; exit 2; }
done
mkdir -p "$OUT"
export TESSERA_RUNNER=$RUNNER

# --- machine ---------------------------------------------------------------------------------
NCPU=$(nproc)
llc_bytes() {
    local best=0 lvl size d
    for d in /sys/devices/system/cpu/cpu0/cache/index*; do
        [[ $(cat "$d/type") == Instruction ]] && continue
        lvl=$(cat "$d/level")
        size=$(cat "$d/size")
        case $size in
            *K) size=$(( ${size%K} * 1024 )) ;;
            *M) size=$(( ${size%M} * 1024 * 1024 )) ;;
        esac
        if (( lvl >= 3 )) || (( best == 0 )); then best=$size; fi
    done
    echo "$best"
}
LLC=$(llc_bytes)
LLC_SHARED=$(cat /sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list 2>/dev/null || echo "?")
MODEL=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p')
FLAGS=$(grep -m1 '^flags' /proc/cpuinfo)
if [[ $FLAGS == *" avx512f "* ]]; then ISA=avx512; LANES=16
elif [[ $FLAGS == *" avx2 "* && $FLAGS == *" fma "* ]]; then ISA=avx2; LANES=8
else ISA=scalar; LANES=1; fi
TRIAD_ARRAY_BYTES=$(( TRIAD_MB * 1000000 ))
if (( 3 * TRIAD_ARRAY_BYTES < 4 * LLC )); then
    echo "$0: warning: triad arrays (3 x $TRIAD_MB MB) are not 4x the LLC ($LLC bytes)" >&2
fi
{
    echo "date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "model: $MODEL"
    lscpu | grep -E '^(CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Hypervisor vendor|CPU family|Model|L1d cache|L2 cache|L3 cache|BogoMIPS):' || true
    echo "LLC (sysfs cpu0 index3): $LLC bytes, shared by CPUs $LLC_SHARED"
    echo "ISA (cpuinfo flags, as detectCpuIsa): $ISA -> $LANES FP32 lanes per vector"
    echo "compiler: $($CC --version | head -1)"
    echo "kernel: $(uname -r)"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

# --- build the references --------------------------------------------------------------------
$CC -O3 -march=native -fopenmp "$ROOT/bench/stream_triad.c" -o "$OUT/stream_triad"
$CC -O3 -march=native -fopenmp -DTRIAD_FLOAT "$ROOT/bench/stream_triad.c" -o "$OUT/stream_triad_f32"
$CC -O2 -march=native -pthread "$ROOT/bench/cpu_freq.c" -o "$OUT/cpu_freq"

load1() { cut -d' ' -f1 /proc/loadavg; }
wait_quiet() {
    local waited=0
    while awk -v l="$(load1)" -v m="$MAX_LOAD" 'BEGIN { exit !(l >= m) }'; do
        if (( waited >= MAX_WAIT )); then
            echo "$0: load $(load1) still >= $MAX_LOAD after ${MAX_WAIT} s; giving up" >&2
            exit 3
        fi
        echo "load $(load1) >= $MAX_LOAD, waiting..." >&2
        sleep 20
        waited=$(( waited + 20 ))
    done
}

# --- measure ---------------------------------------------------------------------------------
for (( run = 1; run <= RUNS; ++run )); do
    D=$OUT/run$run
    mkdir -p "$D"
    wait_quiet
    echo "run $run: load before $(load1)" >&2
    { echo "load_before $(load1)"; echo "start $(date -u '+%H:%M:%S')"; } > "$D/load.txt"
    "$OUT/cpu_freq" > "$D/freq.json" 2> "$D/freq.err"
    "$CLI" roofline measure --target cpu --json > "$D/tessera.json" 2> "$D/tessera.err"
    OMP_NUM_THREADS=$NCPU OMP_PROC_BIND=close OMP_PLACES=cores OMP_DYNAMIC=false \
        "$OUT/stream_triad" --mb-per-array "$TRIAD_MB" --reps "$TRIAD_REPS" > "$D/triad.json" 2> "$D/triad.err"
    OMP_NUM_THREADS=$NCPU OMP_PROC_BIND=close OMP_PLACES=cores OMP_DYNAMIC=false \
        "$OUT/stream_triad_f32" --mb-per-array "$TRIAD_MB" --reps "$TRIAD_REPS" > "$D/triad_f32.json" 2> "$D/triad_f32.err"
    { echo "load_after $(load1)"; echo "end $(date -u '+%H:%M:%S')"; } >> "$D/load.txt"
    cat "$D/freq.err" "$D/triad.err" "$D/triad_f32.err" >&2
done

# --- table -----------------------------------------------------------------------------------
python3 - "$OUT" "$RUNS" "$NCPU" "$LANES" "$FMA_UNITS" <<'EOF' | tee "$OUT/table.md"
import json, sys
out, runs, ncpu, lanes, fma_units = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])

def within(a, ref):
    d = (a - ref) / ref * 100
    return d, ("yes" if abs(d) <= 10 else "**no**")

def roof(roofs, kind, key, threads, method=None):
    best = None
    for r in roofs:
        if r["kind"] != kind or r["threads"] != threads:
            continue
        if kind == "bandwidth" and r.get("level") != key:
            continue
        if kind == "compute" and (r.get("precision") != key):
            continue
        if method and not r.get("method", "").startswith(method):
            continue
        if best is None or r["value"] > best["value"]:
            best = r
    return best

rows = []
for run in range(1, runs + 1):
    d = f"{out}/run{run}"
    t = json.load(open(f"{d}/tessera.json"))
    tr = json.load(open(f"{d}/triad.json"))
    fq = json.load(open(f"{d}/freq.json"))
    load = dict(l.split(None, 1) for l in open(f"{d}/load.txt").read().splitlines())
    tf = json.load(open(f"{d}/triad_f32.json"))
    roofs = t["roofs"]
    dram = roof(roofs, "bandwidth", "DRAM", ncpu)
    dram_triad = roof(roofs, "bandwidth", "DRAM", ncpu, "triad")
    fma1 = roof(roofs, "compute", "fp32", 1, "fma")
    fman = roof(roofs, "compute", "fp32", ncpu, "fma")
    ghz_alone0 = fq["alone"][0]["median_ghz"]
    ghz_all = sum(x["median_ghz"] for x in fq["all"])
    ghz_wide = sum(x["median_ghz"] for x in fq.get("avx512", fq["all"]))
    per_cycle = lanes * 2 * fma_units
    peak1 = per_cycle * ghz_alone0
    peakn = per_cycle * ghz_wide
    rows.append((run, load, t, tr, tf, fq, dram, dram_triad, fma1, fman, ghz_alone0, ghz_all, ghz_wide, peak1, peakn))

print(f"FLOP/cycle/core assumed: {lanes} FP32 lanes x 2 (FMA) x {fma_units} FMA units = {lanes*2*fma_units}\n")
print("| run | quantity | Tessera | reference | Tessera vs reference | within 10%? |")
print("|---|---|---|---|---|---|")
for (run, load, t, tr, tf, fq, dram, dram_triad, fma1, fman, g1, gall, gwide, peak1, peakn) in rows:
    tb, tm = tr["best_gbps"], tr["median_gbps"]
    d, ok = within(dram_triad["value"], tb)
    dm, okm = within(dram_triad["value"], tm)
    print(f"| {run} | DRAM triad, {ncpu} thr (both count 3 words/elem, no write-allocate) | {dram_triad['value']:.2f} GB/s ({dram_triad['method']}, fp32) | "
          f"STREAM-style triad ({tr['element']}) best {tb:.2f} / median {tm:.2f} GB/s | {d:+.1f}% vs best, {dm:+.1f}% vs median | {ok} / {okm} |")
    fb, fm = tf["best_gbps"], tf["median_gbps"]
    d5, ok5 = within(dram_triad["value"], fb)
    d6, ok6 = within(dram_triad["value"], fm)
    print(f"| {run} | same, reference in float (Tessera's element type) | {dram_triad['value']:.2f} GB/s | "
          f"triad (float) best {fb:.2f} / median {fm:.2f} GB/s | {d5:+.1f}% vs best, {d6:+.1f}% vs median | {ok5} / {ok6} |")
    d2, ok2 = within(dram["value"], tb)
    print(f"| {run} | DRAM roof used by the roofline (max over methods), {ncpu} thr | {dram['value']:.2f} GB/s ({dram['method']}) | "
          f"triad best {tb:.2f} GB/s (x4/3 with write-allocate: {tb*4/3:.2f}) | {d2:+.1f}% | {ok2} |")
    d3, ok3 = within(fma1["value"], peak1)
    print(f"| {run} | FP32 FMA peak, 1 thr | {fma1['value']:.1f} GFLOP/s ({fma1['method']}) | "
          f"{lanes*2*fma_units} x {g1:.3f} GHz (cpu0 alone) = {peak1:.1f} | {d3:+.1f}% ({fma1['value']/peak1*100:.0f}% of peak) | {ok3} |")
    d4, ok4 = within(fman["value"], peakn)
    print(f"| {run} | FP32 FMA peak, {ncpu} thr | {fman['value']:.1f} GFLOP/s ({fman['method']}) | "
          f"{lanes*2*fma_units} x {gwide:.3f} GHz (sum, all CPUs, zmm FMA load) = {peakn:.1f} | {d4:+.1f}% ({fman['value']/peakn*100:.0f}% of peak) | {ok4} |")
print()
for (run, load, t, tr, tf, fq, *_rest) in rows:
    fr = "; ".join(f"{m}: " + ", ".join(f"cpu{x['cpu']} {x['median_ghz']:.3f}" for x in fq[m]) for m in ("alone", "all", "avx512") if m in fq)
    print(f"- run {run}: 1-min load average before {load['load_before']}, after {load['load_after']} ({load['start']}-{load['end']} UTC); clock (median GHz) {fr}; "
          f"triad {tr['threads']} threads x {tr['elements']} {tr['element']}s per array; Tessera measured in {t['seconds']:.1f} s")
EOF
echo "results in $OUT" >&2
