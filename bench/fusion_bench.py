#!/usr/bin/env python3
"""GPU benchmark for issue 6 (fusion plans), peers in the same run on the same device.

Runs on the device machine (CUDA 13, PyTorch, onnx) with tessera-cli / tessera-runner built elsewhere
(bench/device_pack.sh, bench/device_run.sh fusion). Every figure is printed as one JSON line
tagged "result" and as a table at the end.

1. Every distinct MobileNetV2 depthwise 3x3 -> ReLU6 -> pointwise block (12 shapes), fp32 NCHW, at
   batch 1 and 32, as a three-node ONNX model (dw, relu6, pw; biases as after BatchNorm folding):
   - Tessera fused: one dw-pw kernel (an explicit plan file grouping the three nodes), median of
     the runner's CUDA-event timing. The runner rotates the inputs between copies when they are
     smaller than twice the L2 (cold caches, as a layer inside a network sees them);
   - Tessera unfused (--plan none): the sum of its three kernels;
   - PyTorch eager (cuDNN, benchmark mode, TF32 off): warm (same tensors every call) and cold
     (inputs rotated over copies exceeding 2x L2, like the runner);
   - torch.compile (default mode) of the same block, warm (three blocks only: it compiles for seconds);
   - the DRAM floor: compulsory bytes (input + weights + output) / the device-to-device copy
     bandwidth measured in this run.
   Tessera's output is checked against PyTorch's (relative L2).
2. FusePlanner's prediction for each block (tessera-cli plan --planner fuseplanner --json: does it
   fuse, predicted bytes) next to the kernel's compulsory bytes; with --ncu, ncu's DRAM bytes for
   three blocks.
3. Whole MobileNetV2 (torchvision, random weights) at batch 1 and 32: Tessera with --plan
   fuseplanner, hidet and none, against PyTorch eager.

Usage: bench/fusion_bench.py CLI_PATH WORK_DIR [--quick] [--ncu] [--mobilenet-only] [--batches=32]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

cli = sys.argv[1]
work = sys.argv[2]
quick = "--quick" in sys.argv
use_ncu = "--ncu" in sys.argv
mobilenet_only = "--mobilenet-only" in sys.argv  # skip the blocks: whole MobileNetV2 per planner only
mobilenet_batches = [int(a.split("=")[1]) for a in sys.argv if a.startswith("--batches=")] or None
os.makedirs(work, exist_ok=True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
results = []
L2_BYTES = torch.cuda.get_device_properties(0).L2_cache_size


def record(name, **kw):
    kw["name"] = name
    results.append(kw)
    print(json.dumps({"result": kw}), flush=True)


def cuda_median(fn, min_ms=200, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times, total = [], 0.0
    while total < min_ms or len(times) < 10:
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        t = s.elapsed_time(e)
        times.append(t)
        total += t
    return statistics.median(times) * 1e-3


def run_cli(args, timeout=600):
    p = subprocess.run([cli] + args, capture_output=True, text=True, timeout=timeout)
    return p


def tessera_json(args):
    p = run_cli(args)
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError:
        j = {"ok": False}
    if p.returncode != 0:
        print("tessera-cli", " ".join(args[:2]), "rc", p.returncode, p.stderr[-1500:], flush=True)
        j["ok"] = False
    j["stderr"] = p.stderr
    return j


# MobileNetV2's distinct DW -> PW shapes: (channels, input H=W, DW stride, PW filters).
BLOCKS = [(32, 112, 1, 16), (96, 112, 2, 24), (144, 56, 1, 24), (144, 56, 2, 32), (192, 28, 1, 32),
          (192, 28, 2, 64), (384, 14, 1, 64), (384, 14, 1, 96), (576, 14, 1, 96), (576, 14, 2, 160),
          (960, 7, 1, 160), (960, 7, 1, 320)]
COMPILE_BLOCKS = [BLOCKS[0], BLOCKS[2], BLOCKS[10]]  # torch.compile takes seconds per block: these only
if quick:
    BLOCKS = COMPILE_BLOCKS
if mobilenet_only:
    BLOCKS = []


def make_block(path, n, c, h, s, k, rng):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    wd = (rng.standard_normal((c, 1, 3, 3)) * 0.3).astype(np.float32)
    bd = (rng.standard_normal(c) * 0.1).astype(np.float32)
    wp = (rng.standard_normal((k, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
    bp = (rng.standard_normal(k) * 0.1).astype(np.float32)
    ho = (h + 2 - 3) // s + 1
    nodes = [
        helper.make_node("Conv", ["x", "wd", "bd"], ["d"], name="dw", group=c, kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1], strides=[s, s]),
        helper.make_node("Clip", ["d", "lo", "hi"], ["r"], name="relu6"),
        helper.make_node("Conv", ["r", "wp", "bp"], ["y"], name="pw", kernel_shape=[1, 1]),
    ]
    inits = [numpy_helper.from_array(wd, "wd"), numpy_helper.from_array(bd, "bd"),
             numpy_helper.from_array(wp, "wp"), numpy_helper.from_array(bp, "bp"),
             numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    g = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, h])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, ho, ho])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)
    return wd, bd, wp, bp, ho


def fused_plan(path):
    plan = {"format": "tessera-fusion-plan", "version": 1, "planner": "user", "hardware": "h200",
            "groups": [{"name": "block", "kind": "dw-pw", "ops": ["dw", "relu6", "pw"], "anchor": "dw",
                        "prologue": [], "epilogue": [], "tile": {"h": 0, "w": 0, "depth": 0, "filters": 0},
                        "predicted_bytes": -1, "predicted_bytes_saved": 0, "redundant_flops": 0,
                        "reason": "benchmark"}]}
    with open(path, "w") as f:
        json.dump(plan, f)


dev = torch.cuda.get_device_name(0)
print("device:", dev, "L2", L2_BYTES, flush=True)
n_ = 1 << 28
a = torch.empty(n_, dtype=torch.float32, device="cuda").uniform_()
b = torch.empty_like(a)
t = cuda_median(lambda: b.copy_(a))
copy_bw = 2 * 4 * n_ / t
record("d2d_copy", gbps=copy_bw * 1e-9)
del a, b

rng = np.random.default_rng(0)
plan_path = os.path.join(work, "block_plan.json")
fused_plan(plan_path)
ncu_done = 0
for batch in [1, 32]:
    for (c, h, s, k) in BLOCKS:
        tag = f"b{batch}_c{c}_h{h}_s{s}_k{k}"
        path = os.path.join(work, f"block_{tag}.onnx")
        wd, bd, wp, bp, ho = make_block(path, batch, c, h, s, k, rng)
        x = rng.standard_normal((batch, c, h, h)).astype(np.float32)
        xp = os.path.join(work, f"x_{tag}.npy")
        np.save(xp, x)
        tx = torch.from_numpy(x).cuda()
        twd, tbd, twp, tbp = (torch.from_numpy(v).cuda() for v in (wd, bd, wp, bp))

        def block(inp):
            return F.conv2d(torch.clamp(F.conv2d(inp, twd, tbd, stride=s, padding=1, groups=c), 0, 6), twp, tbp)

        with torch.no_grad():
            y_ref = block(tx).double().cpu().numpy()
            t_eager = cuda_median(lambda: block(tx))
            copies = max(1, int(2 * L2_BYTES // x.nbytes) + 1) if x.nbytes < 2 * L2_BYTES else 1
            xs = [tx.clone() for _ in range(min(copies, 64))]
            it = [0]

            def cold():
                it[0] = (it[0] + 1) % len(xs)
                return block(xs[it[0]])

            t_eager_cold = cuda_median(cold)
            del xs
            t_comp = None
            if (c, h, s, k) in COMPILE_BLOCKS:
                try:
                    cb = torch.compile(block)
                    t_comp = cuda_median(lambda: cb(tx), warmup=5)
                except Exception as ex:  # noqa: BLE001
                    print("torch.compile failed:", ex, flush=True)
        out_dir = os.path.join(work, f"out_{tag}")
        jf = tessera_json(["run", path, "--target", "cuda", "--json", "--plan", plan_path, "--input", f"x={xp}",
                           "--output-dir", out_dir])
        ju = tessera_json(["run", path, "--target", "cuda", "--json", "--plan", "none", "--input", f"x={xp}"])
        jp = tessera_json(["plan", path, "--planner", "fuseplanner", "--json", "--input", f"x={xp}"])
        compulsory = 4 * (x.size + wd.size + bd.size + wp.size + bp.size + batch * k * ho * ho)
        floor = compulsory / copy_bw
        rec = {"batch": batch, "C": c, "H": h, "stride": s, "K": k, "eager_s": t_eager, "eager_cold_s": t_eager_cold,
               "compile_s": t_comp, "dram_floor_s": floor, "compulsory_bytes": compulsory}
        if jf.get("ok"):
            ks = jf["kernels"]
            rec["tessera_fused_s"] = sum(kk["time_s"] for kk in ks)
            rec["fused_kernels"] = len(ks)
            rec["fused_ops"] = [kk["ops"] for kk in ks]
            rec["tessera_bytes_issued"] = sum(kk["bytes"] for kk in ks)
            y = np.load(os.path.join(out_dir, "y.npy"))
            rec["rel_l2_vs_torch"] = float(np.linalg.norm(y - y_ref) / np.linalg.norm(y_ref))
            rec["max_abs_vs_torch"] = float(np.max(np.abs(y - y_ref)))
            rec["speedup_vs_eager"] = t_eager / rec["tessera_fused_s"]
            rec["speedup_vs_eager_cold"] = t_eager_cold / rec["tessera_fused_s"]
            if t_comp:
                rec["speedup_vs_compile"] = t_comp / rec["tessera_fused_s"]
            rec["x_floor"] = rec["tessera_fused_s"] / floor
            rec["warnings"] = [ln for ln in jf["stderr"].splitlines() if "warning" in ln][:3]
        if ju.get("ok"):
            rec["tessera_unfused_s"] = sum(kk["time_s"] for kk in ju["kernels"])
        if jp.get("groups") is not None:
            g = [gg for gg in jp["groups"] if gg["kind"] != "single"]
            rec["fuseplanner_fuses"] = bool(g)
            if g:
                rec["fuseplanner_predicted_bytes"] = g[0].get("predicted_bytes")
                rec["fuseplanner_tile"] = g[0].get("tile")
                rec["fuseplanner_reason"] = g[0].get("reason")
            else:
                rec["fuseplanner_reason"] = [gg.get("reason") for gg in jp["groups"]][:3]
        record("dw_pw_block_" + tag, **rec)
        ncu = shutil.which("ncu") or ("/usr/local/cuda/bin/ncu" if os.path.exists("/usr/local/cuda/bin/ncu") else None)
        if use_ncu and ncu and batch == 32 and ncu_done < 3 and (c, h) in [(32, 112), (144, 56), (960, 7)]:
            ncu_done += 1
            p = subprocess.run(["timeout", "200", ncu, "--clock-control", "none", "--target-processes", "all",
                                "--kernel-name", "regex:tk_", "--launch-count", "1", "--metrics",
                                "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum", "--csv", cli, "run",
                                path, "--target", "cuda", "--no-timing", "--plan", plan_path, "--input", f"x={xp}"],
                               capture_output=True, text=True)
            vals = {}
            for ln in p.stdout.splitlines():
                for m in ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum"):
                    if m in ln:
                        try:
                            vals[m] = ln.split('","')[-1].strip('"').replace(",", "")
                        except Exception:  # noqa: BLE001
                            pass
            record("ncu_block_" + tag, compulsory_bytes=compulsory,
                   fuseplanner_predicted_bytes=rec.get("fuseplanner_predicted_bytes"), ncu=vals,
                   tail=p.stdout[-600:] if not vals else "")
        del tx

# ---- whole MobileNetV2 ----
if not quick:
    import torchvision
    for batch in (mobilenet_batches or [1, 32]):
        torch.manual_seed(0)
        m = torchvision.models.mobilenet_v2(weights=None).eval()
        x = torch.randn(batch, 3, 224, 224)
        path = os.path.join(work, f"mobilenet_v2_b{batch}.onnx")
        torch.onnx.export(m, (x,), path, input_names=["input"], output_names=["output"], opset_version=17,
                          dynamo=False)
        xp = os.path.join(work, f"mx{batch}.npy")
        np.save(xp, x.numpy())
        mc = m.cuda()
        xc = x.cuda()
        with torch.no_grad():
            t_eager = cuda_median(lambda: mc(xc))
            y_ref = mc(xc).double().cpu().numpy()
        rec = {"batch": batch, "eager_s": t_eager}
        for plan in ["none", "hidet", "fuseplanner"]:
            out_dir = os.path.join(work, f"mb_{batch}_{plan}")
            j = tessera_json(["run", path, "--target", "cuda", "--json", "--plan", plan, "--input", f"input={xp}",
                              "--output-dir", out_dir])
            if j.get("ok"):
                y = np.load(os.path.join(out_dir, "output.npy"))
                rec[plan] = {"total_s": j["total_time_s"], "kernels": len(j["kernels"]),
                             "fused_groups": j.get("plan", {}).get("fused_groups"),
                             "speedup_vs_eager": t_eager / j["total_time_s"],
                             "rel_l2_vs_torch": float(np.linalg.norm(y - y_ref) / np.linalg.norm(y_ref)),
                             "warnings": [ln for ln in j["stderr"].splitlines() if "warning" in ln][:4]}
        record(f"mobilenet_v2_b{batch}_plans", **rec)

# ---- summary ----
print("\n== DW->ReLU6->PW blocks (times in us)")
print("%-26s %9s %9s %9s %9s %9s %9s %7s %7s %8s" % ("block", "fused", "unfused", "eager", "eagerCold", "compile",
                                                   "floor", "xEager", "xComp", "relerr"))
geo = {1: [], 32: []}
for r in results:
    if not r["name"].startswith("dw_pw_block_"):
        continue
    f = r.get("tessera_fused_s")
    us = lambda v: "%9.1f" % (v * 1e6) if v else "%9s" % "-"  # noqa: E731
    print("%-26s %s %s %s %s %s %s %7.2f %7.2f %8.1e" % (
        r["name"][12:], us(f), us(r.get("tessera_unfused_s")), us(r["eager_s"]), us(r["eager_cold_s"]),
        us(r.get("compile_s")), us(r["dram_floor_s"]), r.get("speedup_vs_eager", 0), r.get("speedup_vs_compile", 0),
        r.get("rel_l2_vs_torch", -1)))
    if f:
        geo[r["batch"]].append(r["eager_s"] / f)
for bt, v in geo.items():
    if v:
        print("batch %d: geometric-mean speedup over eager = %.2fx (%d blocks)" % (
            bt, float(np.exp(np.mean(np.log(v)))), len(v)))
