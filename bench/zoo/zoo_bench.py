#!/usr/bin/env python3
"""Runs the model zoo through Tessera and, for timings, beside PyTorch eager and torch.compile.

  check: every model of a manifest (tests/zoo/manifest.json) under every planner, on --target
         (cpu or cuda), fed torch's inputs, every graph output compared with torch's (--expect);
         one line per model and planner: verdict, relative L2 of each output, wall seconds.
  perf:  the large zoo (bench/zoo/export_zoo.py --size large) at --batch, on the GPU: PyTorch eager
         and torch.compile (TF32 off, CUDA-event medians; --peers eager skips torch.compile) and
         Tessera's end-to-end median per planner (`tessera-cli run --target cuda --json`), with its
         compile wall time, as ratios. With --target cpu: ONNX Runtime's CPU provider against
         Tessera's CPU target, both on --threads threads.

Usage (on the GPU machine, with the binaries bench/device_pack.sh carries):
  python3 bench/zoo/zoo_bench.py check --cli .devcarry/bin/tessera-cli --manifest tests/zoo/manifest.json --target cuda
  python3 bench/zoo/zoo_bench.py perf --cli .devcarry/bin/tessera-cli --batch 32 --models resnet50,mobilenet_v2 --planners hidet
"""
import argparse
import json
import shlex
import os
import subprocess
import sys
import tempfile
import time

PLANNERS = ["none", "hidet", "fuseplanner"]


def run_cli(cli, args, timeout):
    t0 = time.time()
    try:
        p = subprocess.run([cli] + args, capture_output=True, text=True, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    return rc, out, err, time.time() - t0


def check(a):
    from concurrent.futures import ThreadPoolExecutor
    base = os.path.dirname(a.manifest)
    man = json.load(open(a.manifest))
    only = set(filter(None, a.models.split(",")))
    jobs = []
    for m in man["models"]:
        if only and m["name"] not in only:
            continue
        args = [os.path.join(base, m["model"])]
        for n, f in m["inputs"].items():
            args += ["--input", f"{n}={os.path.join(base, f)}"]
        for n, f in m["outputs"].items():
            args += ["--expect", f"{n}={os.path.join(base, f)}"]
        for plan in a.planners.split(","):
            jobs.append((m["name"], plan, ["run"] + args + shlex.split(a.extra) +
                         ["--target", a.target, "--plan", plan, "--json", "--no-timing"]))

    def one(job):
        name, plan, args = job
        rc, out, err, wall = run_cli(a.cli, args, a.timeout)
        rel = []
        try:
            j = json.loads(out)
            for c in j.get("output_checks", []):
                rel.append(f"{c['name']}={c['rel_l2'] if c['rel_l2'] is not None else 'inf'}")
        except Exception:
            pass
        verdict = "match" if rc == 0 else ("MISMATCH" if rc == 3 else f"FAIL rc={rc}")
        first_err = next((l for l in err.splitlines() if "error" in l), "")[:300]
        line = f"| {name} | {plan} | {verdict} | {' '.join(rel)} | {wall:.1f} | {first_err} |"
        print(line, flush=True)
        return verdict

    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        verdicts = list(pool.map(one, jobs))
    bad = sum(1 for v in verdicts if v != "match")
    print(f"{len(verdicts) - bad} of {len(verdicts)} model/planner runs match torch on {a.target}")
    return 1 if bad else 0


def perf(a):
    import numpy as np
    import torch
    sys.path.insert(0, os.path.dirname(__file__))
    import export_zoo

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    only = set(filter(None, a.models.split(",")))
    work = tempfile.mkdtemp(prefix="zoo-perf-")

    def cuda_median(fn, reps):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        return float(np.median(times))

    def wall_median(fn, reps):
        for _ in range(2):
            fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return float(np.median(times))

    peers = "none" if a.no_peers else a.peers
    planners = a.planners.split(",")
    if a.target == "cpu":
        print(f"CPU, {a.threads} threads for ONNX Runtime (intra-op) and Tessera (--threads)", flush=True)
    head = "onnxruntime ms | - | " if a.target == "cpu" else "eager ms | compile ms (cold s) | "
    tail = " | best vs onnxruntime | - |" if a.target == "cpu" else " | best vs eager | best vs compile |"
    print("| model | batch | " + head + " | ".join(f"tessera {p} ms (wall s)" for p in planners) + tail, flush=True)
    for name, make, inputs, in_names, out_names in export_zoo.zoo("large", a.batch):
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model = export_zoo.randomize(make(), 7)
        path = os.path.join(work, f"{name}.onnx")
        export_zoo.export(model, inputs, path, in_names, out_names, "torchscript", 17)
        with torch.no_grad():
            ref = model(*inputs)
        refs = ref if isinstance(ref, tuple) else (ref,)
        files = []
        for n, t in zip(in_names, inputs):
            f = os.path.join(work, f"{name}.in.{n}.npy")
            np.save(f, t.numpy())
            files += ["--input", f"{n}={f}"]
        for n, t in zip(out_names, refs):
            f = os.path.join(work, f"{name}.out.{n}.npy")
            np.save(f, t.numpy())
            files += ["--expect", f"{n}={f}"]
        eager = comp = cold = float("nan")
        if a.target == "cpu" and peers != "none":
            # ONNX Runtime on the same model file with the same thread count (wall-clock median).
            import onnxruntime as ort
            so = ort.SessionOptions()
            so.intra_op_num_threads = a.threads
            so.inter_op_num_threads = 1
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            feed = {n: t.numpy() for n, t in zip(in_names, inputs)}
            eager = wall_median(lambda: sess.run(None, feed), a.reps)
        elif peers != "none":
            gm = model.cuda()
            gin = tuple(t.cuda() for t in inputs)
            with torch.no_grad():
                eager = cuda_median(lambda: gm(*gin), a.reps)
                if peers == "all":
                    t0 = time.time()
                    cm = torch.compile(gm)
                    cm(*gin)
                    torch.cuda.synchronize()
                    cold = time.time() - t0
                    comp = cuda_median(lambda: cm(*gin), a.reps)
                    del cm
            del gm
            torch.cuda.empty_cache()
        cells, best = [], None
        for plan in planners:
            rc, out, err, wall = run_cli(a.cli, ["run", path] + files + ["--target", a.target, "--plan", plan, "--json"]
                                         + (["--threads", str(a.threads)] if a.target == "cpu" else []),
                                         a.timeout)
            if a.save:
                os.makedirs(a.save, exist_ok=True)
                with open(os.path.join(a.save, f"{name}.b{a.batch}.{plan}.json"), "w") as f:
                    f.write(out)
            try:
                j = json.loads(out)
                ms = j["total_time_s"] * 1e3
                ok = all(c["passed"] for c in j.get("output_checks", []))
                cells.append(f"{ms:.2f} ({wall:.0f}){'' if ok else ' MISMATCH'}")
                if ok and (best is None or ms < best):
                    best = ms
            except Exception:
                first = next((l for l in err.splitlines() if "error" in l), err[-200:])
                cells.append(f"FAIL rc={rc}: {first[:160]}")
        ratio_e = f"{eager / best:.2f}x" if best else "-"
        ratio_c = f"{comp / best:.2f}x" if best else "-"
        print(f"| {name} | {a.batch} | {eager:.2f} | {comp:.2f} ({cold:.0f}) | " + " | ".join(cells)
              + f" | {ratio_e} | {ratio_c} |", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--cli", required=True)
    c.add_argument("--manifest", required=True)
    c.add_argument("--target", default="cpu")
    c.add_argument("--models", default="")
    c.add_argument("--timeout", type=float, default=600)
    c.add_argument("--planners", default=",".join(PLANNERS))
    c.add_argument("--jobs", type=int, default=1, help="tessera-cli processes at a time")
    c.add_argument("--extra", default="", help="more tessera-cli run arguments, e.g. --check")
    p = sub.add_parser("perf")
    p.add_argument("--cli", required=True)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--models", default="")
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--save", default="", help="folder for tessera-cli's JSON report per model and planner")
    p.add_argument("--no-peers", action="store_true", help="skip the peers (same as --peers none)")
    p.add_argument("--peers", default="all", choices=["all", "eager", "none"],
                   help="cuda: eager and torch.compile (all), eager only, or none; cpu: ONNX Runtime unless none")
    p.add_argument("--target", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: Tessera's CPU target against ONNX Runtime's CPU provider with --threads each")
    p.add_argument("--threads", type=int, default=2, help="cpu: threads for both ONNX Runtime and Tessera")
    p.add_argument("--planners", default=",".join(PLANNERS))
    p.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    return check(a) if a.cmd == "check" else perf(a)


if __name__ == "__main__":
    sys.exit(main())
