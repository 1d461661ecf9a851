#!/usr/bin/env python3
"""CPU end-to-end benchmark for issue 4, peers in the same run.

- MobileNetV2 (samples/) and ResNet-18 (torchvision, random weights, exported here) at batch 1,
  fp32, 2 threads: `tessera-cli run --json --threads 2` end-to-end median against ONNX Runtime
  (PyPI, CPUExecutionProvider, intra_op_num_threads=2, inter_op_num_threads=1, sequential).
- A 1024^3 fp32 MatMul (an ONNX model with one MatMul node) against numpy (OpenBLAS, 2 threads).
- Compile time: the model's module compiled cold (empty kernel cache) and again (cache hit).

Needs: a built tree, `pip install onnx onnxruntime numpy torch torchvision`.
Usage: bench/cpu_run_bench.py [BUILD_DIR]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Peers use the same thread count as Tessera (set before numpy loads OpenBLAS).
os.environ["OPENBLAS_NUM_THREADS"] = "2"
os.environ["OMP_NUM_THREADS"] = "2"

import numpy as np  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
cli = os.path.join(build, "app", "cli", "tessera-cli")
THREADS = 2


def median_time(fn, min_seconds=1.0, min_reps=10):
    fn()  # warm-up
    samples = []
    start = time.perf_counter()
    while len(samples) < min_reps or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), len(samples)


def make_resnet18(path):
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"], opset_version=17,
                      dynamo=False)


def make_matmul(path, n):
    import onnx
    from onnx import TensorProto, helper
    g = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["C"], name="matmul")], "matmul",
                          [helper.make_tensor_value_info("A", TensorProto.FLOAT, [n, n]),
                           helper.make_tensor_value_info("B", TensorProto.FLOAT, [n, n])],
                          [helper.make_tensor_value_info("C", TensorProto.FLOAT, [n, n])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def tessera_run(model, env, extra=()):
    t0 = time.perf_counter()
    p = subprocess.run([cli, "run", model, "--json", "--threads", str(THREADS), *extra], capture_output=True,
                       text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"tessera-cli run {model} failed ({p.returncode}): {p.stderr}")
    return json.loads(p.stdout), wall


def ort_time(model):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = THREADS
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feeds[i.name] = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return median_time(lambda: s.run(None, feeds))


def main():
    tmp = tempfile.mkdtemp()
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")  # cold kernel cache for the compile figures
    resnet = os.path.join(tmp, "resnet18.onnx")
    make_resnet18(resnet)
    mm = os.path.join(tmp, "matmul1024.onnx")
    make_matmul(mm, 1024)
    models = [("mobilenet_v2", os.path.join(root, "samples", "mobilenet_v2.onnx")), ("resnet18", resnet)]
    print(f"threads={THREADS} cpu={os.cpu_count()} cores")
    print(f"{'model':<14}{'kernels':>8}{'tessera ms':>12}{'ORT ms':>10}{'ratio':>8}{'cold compile s':>16}{'s/kernel':>10}{'hit run wall s':>16}")
    for name, path in models:
        rep, _ = tessera_run(path, env)  # cold compile
        cold = rep["compile"]["seconds"]
        rep2, wall2 = tessera_run(path, env)
        assert rep2["compile"]["cache_hit"], "second run should hit the kernel cache"
        ours = rep2["total_time_s"]
        peer, _ = ort_time(path)
        nk = len(rep["kernels"])
        print(f"{name:<14}{nk:>8}{ours*1e3:>12.2f}{peer*1e3:>10.2f}{ours/peer:>8.2f}{cold:>16.2f}{cold/nk:>10.3f}{wall2:>16.2f}")
        worst = sorted(rep2["kernels"], key=lambda k: -k["time_s"])[:5]
        for k in worst:
            print(f"    slowest: {k['name'][:50]:<50} {k['op_type']:<18} {k['time_s']*1e3:8.3f} ms {k['gflops']:8.2f} GFLOP/s")
    rep, _ = tessera_run(mm, env)
    ours = rep["total_time_s"]
    a = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    b = np.random.default_rng(1).standard_normal((1024, 1024)).astype(np.float32)
    peer, _ = median_time(lambda: a @ b)
    flops = 2 * 1024 ** 3
    print(f"matmul 1024^3: tessera {ours*1e3:.2f} ms ({flops/ours*1e-9:.1f} GFLOP/s), numpy {peer*1e3:.2f} ms "
          f"({flops/peer*1e-9:.1f} GFLOP/s), ratio {ours/peer:.2f}")


if __name__ == "__main__":
    main()
