#!/usr/bin/env python3
"""Per-kernel comparison of fused conv-chain kernels with their unfused kernels on the CPU.

Runs `tessera-cli run MODEL --json` alternately with `--plan fuseplanner` (plus any extra
arguments, e.g. `--hw h200`) and `--plan none`, REPS times each, and prints for every fused kernel
of two convolutions (dw-pw, pw-dw, pw-pw) the median of its per-kernel medians next to the sum of
the medians of its ops run separately, and the end-to-end medians of both plans.

Usage: bench/cpu_chain_vs_unfused.py CLI MODEL THREADS REPS [extra fuseplanner args...]
"""
import json
import statistics
import subprocess
import sys


def run(cli, model, threads, plan_args):
    out = subprocess.run([cli, 'run', model, '--threads', str(threads), '--json'] + plan_args,
                         capture_output=True, text=True, check=False).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    cli, model, threads, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    extra = sys.argv[5:]
    fused, unfused = [], []
    for _ in range(reps):
        fused.append(run(cli, model, threads, ['--plan', 'fuseplanner'] + extra))
        unfused.append(run(cli, model, threads, ['--plan', 'none']))
    times, ops = {}, {}
    for r in fused + unfused:
        for k in r['kernels']:
            times.setdefault(k['name'] + ('' if r in fused else '#none'), []).append(k['time_s'])
            if r in fused:
                ops[k['name']] = k['ops']

    def med(key):
        return statistics.median(times[key]) * 1e6

    print('end to end: fuseplanner %.3f ms, none %.3f ms (medians of %d runs)' % (
        statistics.median(r['total_time_s'] for r in fused) * 1e3,
        statistics.median(r['total_time_s'] for r in unfused) * 1e3, reps))
    for name, members in ops.items():
        if sum(1 for m in members if m.endswith('Conv')) != 2:
            continue
        separate = sum(med(m + '#none') for m in members)
        mine = med(name)
        print('%-55s %d ops  fused %7.1f us  unfused sum %7.1f us  ratio %.2f' % (
            name[-55:], len(members), mine, separate, mine / separate))
    return 0


if __name__ == '__main__':
    sys.exit(main())
