#!/usr/bin/env python3
"""GPU benchmark for issue 5 (CUDA backend), peers in the same run on the same device.

Runs on the device machine (CUDA 13, PyTorch) with tessera-cli / tessera-runner built elsewhere
(see bench/device_run.sh). Every figure is printed as one JSON line tagged "result" and as a
table at the end.

- fp32 MatMul 4096^3 (an ONNX model with one MatMul node, inputs fed as .npy): Tessera's kernel
  median (runner, CUDA events) against cuBLAS through torch.matmul with TF32 off.
- MobileNetV2 (torchvision, random weights, exported here) at batch 1 and 32: Tessera end to end
  (sum of kernel launches, runner's end-to-end median) against PyTorch eager (cuDNN) and
  torch.compile (default mode), fp32, TF32 off.
- Device-to-device copy bandwidth through PyTorch (the HBM ceiling).
- Edit-to-timing latency of one kernel: `tessera-cli run` of a one-node model with an empty
  NVRTC cache (compile + load + timed run), median and p95 of N runs with a fresh cache each.

Usage: bench/gpu_bench.py CLI_PATH WORK_DIR [--quick]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

cli = sys.argv[1]
work = sys.argv[2]
quick = "--quick" in sys.argv
os.makedirs(work, exist_ok=True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
results = []


def record(name, **kw):
    kw["name"] = name
    results.append(kw)
    print(json.dumps({"result": kw}), flush=True)


def cuda_median(fn, min_ms=200, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    total = 0.0
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
    t0 = time.perf_counter()
    p = subprocess.run([cli] + args, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - t0
    return p, wall


def tessera_run(model, inputs, extra=()):
    args = ["run", model, "--target", "cuda", "--json"] + list(extra)
    for k, v in inputs.items():
        args += ["--input", f"{k}={v}"]
    p, wall = run_cli(args)
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError:
        j = {"ok": False, "stdout": p.stdout[-2000:]}
    if p.returncode != 0 or not j.get("ok", False):
        print("tessera-cli failed:", p.returncode, p.stderr[-3000:], flush=True)
    return j, wall


def make_matmul(path, n):
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"], name="matmul")], "matmul",
                          [helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n]),
                           helper.make_tensor_value_info("B", TensorProto.FLOAT, [n, n])],
                          [helper.make_tensor_value_info("C", TensorProto.FLOAT, [n, n])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def make_mobilenet(path, batch):
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.mobilenet_v2(weights=None).eval()
    x = torch.randn(batch, 3, 224, 224)
    torch.onnx.export(m, (x,), path, input_names=["input"], output_names=["output"], opset_version=17,
                      dynamo=False)
    return m


dev = torch.cuda.get_device_name(0)
print("device:", dev, flush=True)

# ---- HBM ceiling: device-to-device copy ----
n = 1 << 30  # 1 Gi floats = 4 GiB read + 4 GiB written
a = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
b = torch.empty_like(a)
t = cuda_median(lambda: b.copy_(a))
record("d2d_copy", bytes=2 * 4 * n, time_s=t, gbps=2 * 4 * n / t * 1e-9)
del a, b

# ---- fp32 MatMul 4096^3 ----
N = 4096
mm = os.path.join(work, "matmul4096.onnx")
make_matmul(mm, N)
rng = np.random.default_rng(0)
A = rng.standard_normal((N, N), dtype=np.float32)
B = rng.standard_normal((N, N), dtype=np.float32)
np.save(os.path.join(work, "A.npy"), A)
np.save(os.path.join(work, "B.npy"), B)
ta, tb = torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda()
t_cublas = cuda_median(lambda: torch.matmul(ta, tb))
flops = 2.0 * N ** 3
record("matmul4096_cublas_fp32", time_s=t_cublas, tflops=flops / t_cublas * 1e-12)
j, _ = tessera_run(mm, {"A": os.path.join(work, "A.npy"), "B": os.path.join(work, "B.npy")},
                   ["--output-dir", os.path.join(work, "mm_out")])
if j.get("ok"):
    t_ts = j["kernels"][0]["time_s"]
    C = np.load(os.path.join(work, "mm_out", "C.npy"))
    ref = (ta.double() @ tb.double()).cpu().numpy()
    rel = float(np.linalg.norm(C - ref) / np.linalg.norm(ref))
    record("matmul4096_tessera", time_s=t_ts, tflops=flops / t_ts * 1e-12, rel_l2_vs_fp64=rel,
           ratio_vs_cublas=t_cublas / t_ts)
del ta, tb

# ---- MobileNetV2 batch 1 and 32 ----
for batch in ([1] if quick else [1, 32]):
    path = os.path.join(work, f"mobilenet_v2_b{batch}.onnx")
    model = make_mobilenet(path, batch).cuda()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    np.save(os.path.join(work, f"x{batch}.npy"), x.cpu().numpy())
    with torch.no_grad():
        t_eager = cuda_median(lambda: model(x))
        record(f"mobilenet_v2_b{batch}_torch_eager", time_s=t_eager)
        try:
            cm = torch.compile(model)
            t_comp = cuda_median(lambda: cm(x), warmup=5)
            record(f"mobilenet_v2_b{batch}_torch_compile", time_s=t_comp)
        except Exception as ex:  # noqa: BLE001
            print("torch.compile failed:", ex, flush=True)
            t_comp = None
        y_ref = model(x).double().cpu().numpy()
    extra = ["--output-dir", os.path.join(work, f"mb{batch}_out")]
    j, _ = tessera_run(path, {"input": os.path.join(work, f"x{batch}.npy")}, extra)
    if j.get("ok"):
        y = np.load(os.path.join(work, f"mb{batch}_out", "output.npy"))
        rel = float(np.linalg.norm(y - y_ref) / np.linalg.norm(y_ref))
        total = j["total_time_s"]
        kern = sorted(j["kernels"], key=lambda k: -k["time_s"])
        dw = [k for k in j["kernels"] if k["op_type"] == "Conv" and k["flops"] > 0 and
              k["arithmetic_intensity"] < 1.0]
        record(f"mobilenet_v2_b{batch}_tessera", time_s=total, kernels=len(j["kernels"]),
               sum_kernel_medians_s=sum(k["time_s"] for k in j["kernels"]), rel_l2_vs_torch=rel,
               ratio_vs_eager=t_eager / total, ratio_vs_compile=(t_comp / total) if t_comp else None,
               slowest=[(k["name"], k["op_type"], k["time_s"]) for k in kern[:5]],
               low_intensity_convs_s=sum(k["time_s"] for k in dw))

# ---- depthwise 3x3 layers alone: Tessera vs cuDNN (batch 32, 144 x 56 x 56) ----
if not quick:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    C_, H_ = 144, 56
    w = rng.standard_normal((C_, 1, 3, 3), dtype=np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["X", "W"], ["Y"], name="dw", group=C_, kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "dw", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [32, C_, H_, H_])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [32, C_, H_, H_])], [numpy_helper.from_array(w, "W")])
    dwp = os.path.join(work, "dw3x3.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), dwp)
    X = rng.standard_normal((32, C_, H_, H_), dtype=np.float32)
    np.save(os.path.join(work, "X.npy"), X)
    tx = torch.from_numpy(X).cuda()
    tw = torch.from_numpy(w).cuda()
    t_cudnn = cuda_median(lambda: torch.nn.functional.conv2d(tx, tw, padding=1, groups=C_))
    floor_bytes = 2 * X.nbytes
    record("dw3x3_b32_cudnn", time_s=t_cudnn, gbps=floor_bytes / t_cudnn * 1e-9)
    j, _ = tessera_run(dwp, {"X": os.path.join(work, "X.npy")})
    if j.get("ok"):
        t_ts = j["kernels"][0]["time_s"]
        record("dw3x3_b32_tessera", time_s=t_ts, gbps=floor_bytes / t_ts * 1e-9, ratio_vs_cudnn=t_cudnn / t_ts)

# ---- edit-to-timing latency: one kernel, cold NVRTC cache each time ----
reps = 5 if quick else 15
lat = []
cache = os.path.join(work, "xdg")
for i in range(reps):
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    t0 = time.perf_counter()
    p = subprocess.run([cli, "run", dwp if not quick else mm, "--target", "cuda", "--reps", "10", "--json"],
                       capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        print("edit-to-timing run failed:", p.stderr[-2000:], flush=True)
        break
    lat.append(time.perf_counter() - t0)
lat.sort()
if lat:
    record("edit_to_timing_one_kernel", median_s=statistics.median(lat),
       p95_s=lat[min(len(lat) - 1, int(0.95 * len(lat)))], reps=len(lat),
       note="tessera-cli run wall time: process start, load, NVRTC compile (cold cache), runner start, "
            "cuInit, module load, 10 timed launches")

print("\n==== summary ====")
for r in results:
    print(json.dumps(r))
