#!/usr/bin/env python3
"""Summarises tessera-cli `run --json` reports: per report the end-to-end time, the compile time,
the output checks and the N slowest kernels (time, op, GFLOP/s, GB/s), and the time per op type.

Usage: python3 bench/zoo/kernel_top.py [--top N] REPORT.json|FOLDER ...
"""
import argparse
import collections
import glob
import json
import os


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    files = []
    for p in a.paths:
        files += sorted(glob.glob(os.path.join(p, "*.json"))) if os.path.isdir(p) else [p]
    for f in files:
        try:
            j = json.load(open(f))
        except Exception as e:  # an empty or cut report (a timed-out run)
            print(f"{os.path.basename(f)}: unreadable ({e})")
            continue
        ks = j.get("kernels", [])
        total = sum(k["time_s"] for k in ks)
        checks = ", ".join(f"{c['name']} {'ok' if c['passed'] else 'MISMATCH'}" for c in j.get("output_checks", []))
        print(f"{os.path.basename(f)}: {j.get('total_time_s', 0) * 1e3:.3f} ms end to end, {len(ks)} kernels "
              f"(sum {total * 1e3:.3f} ms), compile {j.get('compile', {}).get('seconds', 0):.1f} s; {checks}")
        by_op = collections.defaultdict(float)
        for k in ks:
            by_op[k["op_type"]] += k["time_s"]
        print("  by op: " + ", ".join(f"{op} {t * 1e3:.3f}" for op, t in sorted(by_op.items(), key=lambda x: -x[1])[:8]))
        for k in sorted(ks, key=lambda k: -k["time_s"])[:a.top]:
            print(f"  {k['time_s'] * 1e6:9.1f} us {k['op_type'][:26]:26} {k['gflops']:9.1f} GF/s {k['gbps']:8.1f} GB/s  {k['name'][:70]}")


if __name__ == "__main__":
    main()
