#!/usr/bin/env python3
"""Several passes of bench/dwpw_sweep.py's default-tile measurement, summarised per block (issue 6).

PyTorch eager's time for a block moves by up to ~50% between processes (cuDNN's benchmark mode
picks its algorithm per process; bench/RESULTS.md issue 6 run 6), while Tessera's repeats within
1%. A verdict on the fused dw-pw kernels therefore rests on several passes, each its own process:
this script runs `dwpw_sweep.py CLI WORK_i --batch B --final3 --default-only [--blocks ..]`
PASSES times (on the device machine) and prints, per block, Tessera's and eager's median over the
passes, their ratio, the ratio against the fastest eager pass and the slowest Tessera pass, and
the geometric means: per pass, over the per-block medians, and the conservative one.

Usage (device): bench/dwpw_passes.py CLI WORK_DIR [--passes 3] [--batch 32] [--blocks i,j,..] [--timeout S]
       (anywhere): bench/dwpw_passes.py --from-logs LOG [LOG ...]   (sweep logs with their JSON lines, or
                   this script's logs: their passes, split at the "pass i:" lines)
"""
import json
import math
import os
import statistics
import subprocess
import sys


def records(lines):
    """The sweep's per-block records ({"sweep": {...}} lines) with a default-tile time."""
    out = []
    for line in lines:
        if not line.startswith('{"sweep"'):
            continue
        r = json.loads(line)["sweep"]
        t = r["tiles"].get("default")
        if t and t[0] is not None:
            out.append(r)
    return out


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def summarise(passes):
    """passes: one list of records per pass. Returns the report text."""
    blocks = {}
    for i, recs in enumerate(passes):
        for r in recs:
            key = (r["batch"], r["C"], r["H"], r["stride"], r["K"])
            blocks.setdefault(key, []).append((i, r["eager_us"], r["tiles"]["default"][0], r["tiles"]["default"][1]))
    lines = ["| block (batch, C, H, s, K) | passes | Tessera median (us) | eager per pass (us) | eager median | x eager (medians) | x eager (fastest eager / slowest Tessera) | max rel. L2 vs PyTorch |",
             "|---|---|---|---|---|---|---|---|"]
    med_ratios, cons_ratios = [], []
    for key in sorted(blocks):
        v = blocks[key]
        te = statistics.median(x[2] for x in v)
        ea = statistics.median(x[1] for x in v)
        cons = min(x[1] for x in v) / max(x[2] for x in v)
        med_ratios.append(ea / te)
        cons_ratios.append(cons)
        lines.append(f"| {', '.join(str(k) for k in key)} | {len(v)} | {te:.1f} | {', '.join(f'{x[1]:.1f}' for x in v)} | "
                     f"{ea:.1f} | {ea / te:.2f} | {cons:.2f} | {max(x[3] for x in v):.1e} |")
    per_pass = []
    for i, recs in enumerate(passes):
        if recs:
            per_pass.append(f"{geomean([r['eager_us'] / r['tiles']['default'][0] for r in recs]):.2f}x ({len(recs)} blocks)")
    lines.append("")
    lines.append("geomean over eager per pass: " + ", ".join(per_pass))
    lines.append(f"geomean over the per-block medians: {geomean(med_ratios):.2f}x ({len(med_ratios)} blocks); "
                 f"conservative (fastest eager / slowest Tessera): {geomean(cons_ratios):.2f}x")
    return "\n".join(lines)


def main(argv):
    if "--from-logs" in argv:
        logs = argv[argv.index("--from-logs") + 1:]
        passes = []
        for path in logs:
            # A sweep log is one pass; this script's own log holds several, each after "pass i:".
            cur = []
            with open(path) as f:
                for line in f:
                    if line.startswith("pass ") and cur:
                        passes.append(records(cur))
                        cur = []
                    cur.append(line)
            if records(cur):
                passes.append(records(cur))
        print(summarise(passes))
        return 0
    if len(argv) < 3:
        print(__doc__)
        return 2
    cli, work = argv[1], argv[2]

    def opt(name, default):
        return argv[argv.index(name) + 1] if name in argv else default
    n = int(opt("--passes", "3"))
    timeout = int(opt("--timeout", "200"))
    sweep = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dwpw_sweep.py")
    passes = []
    for i in range(n):
        cmd = [sys.executable, sweep, cli, os.path.join(work, f"pass{i}"), "--batch", opt("--batch", "32"),
               "--final3", "--default-only"]
        if "--blocks" in argv:
            cmd += ["--blocks", opt("--blocks", "")]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            out = p.stdout
        except subprocess.TimeoutExpired as ex:  # keep the blocks it finished
            out = ex.stdout.decode() if isinstance(ex.stdout, bytes) else (ex.stdout or "")
            print(f"pass {i}: cut by its {timeout} s timeout", flush=True)
        recs = records(out.splitlines())
        print(f"pass {i}: {len(recs)} blocks", flush=True)
        for line in out.splitlines():
            if line.startswith('{"sweep"'):
                print(line, flush=True)
        passes.append(recs)
    print(summarise(passes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
