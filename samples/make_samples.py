#!/usr/bin/env python3
"""Build Tessera's sample ONNX models next to this script.

Deterministic: every random draw uses a fixed seed, nothing is downloaded.
Needs PyPI's onnx, numpy, onnxruntime, torch and torchvision (CPU is enough).

    python3 samples/make_samples.py

Writes the .onnx models, reference .npy inputs/outputs and expected.json
(what the onnx Python package reports for each model, for the C++ tests).
"""

import io
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# Debian 12 ships onnx 1.12, which understands IR versions up to 8.
DEBIAN_MAX_IR = 8

DTYPE_SHORT = {
    TensorProto.FLOAT: "f32",
    TensorProto.FLOAT16: "f16",
    TensorProto.BFLOAT16: "bf16",
    TensorProto.DOUBLE: "f64",
    TensorProto.INT8: "i8",
    TensorProto.INT16: "i16",
    TensorProto.INT32: "i32",
    TensorProto.INT64: "i64",
    TensorProto.UINT8: "u8",
    TensorProto.UINT16: "u16",
    TensorProto.UINT32: "u32",
    TensorProto.UINT64: "u64",
    TensorProto.BOOL: "bool",
}


def out(*parts):
    return os.path.join(HERE, *parts)


def save_npy(name, array):
    np.save(out(name), np.ascontiguousarray(array))


def run_ort(path, feeds):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


# --------------------------------------------------------------------------
# mobilenet_v2
# --------------------------------------------------------------------------

def make_mobilenet_v2():
    import torch
    import torchvision

    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    model = torchvision.models.mobilenet_v2(weights=None)

    # With torchvision's init and fresh BatchNorm statistics (mean 0, var 1) the
    # activations shrink layer after layer and the logits end up ~1e-9, which
    # makes a useless reference. Calibrate the running statistics on a few
    # fixed-seed random batches (cumulative average) so every layer sees O(1)
    # values, as in a trained network.
    for mod in model.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.reset_running_stats()
            mod.momentum = None
    gen = torch.Generator().manual_seed(1)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, 3, 224, 224, generator=gen))
    model.eval()

    rng = np.random.default_rng(1234)
    x = rng.standard_normal((1, 3, 224, 224), dtype=np.float32)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()

    buf = io.BytesIO()
    # The TorchScript exporter writes a single self-contained file at the
    # requested opset. do_constant_folding folds BatchNormalization into the
    # preceding Conv in eval mode.
    torch.onnx.export(
        model,
        (torch.from_numpy(x),),
        buf,
        dynamo=False,
        opset_version=17,
        input_names=["input"],
        output_names=["output"],
        do_constant_folding=True,
        export_params=True,
    )
    m = onnx.load_from_string(buf.getvalue())
    if m.ir_version > DEBIAN_MAX_IR:
        m.ir_version = DEBIAN_MAX_IR
    m.producer_name = "tessera samples/make_samples.py (torch " + torch.__version__.split("+")[0] + ")"
    for init in m.graph.initializer:
        assert init.data_location != TensorProto.EXTERNAL, "unexpected external data"
    onnx.checker.check_model(m)
    path = out("mobilenet_v2.onnx")
    onnx.save_model(m, path, save_as_external_data=False)

    save_npy("mobilenet_v2_input.npy", x)
    save_npy("mobilenet_v2_output.npy", y)
    (got,) = run_ort(path, {"input": x})
    err = float(np.max(np.abs(got - y)))
    print(f"mobilenet_v2: onnxruntime vs torch max abs error = {err:.3g}")
    if err > 1e-3:
        sys.exit("mobilenet_v2: onnxruntime disagrees with torch")


# --------------------------------------------------------------------------
# dw_pw_block: depthwise 3x3 -> ReLU6 -> pointwise 1x1
# --------------------------------------------------------------------------

def make_dw_pw_block():
    n, c, h, w, k = 1, 32, 56, 56, 16
    rng = np.random.default_rng(42)
    dw_w = (rng.standard_normal((c, 1, 3, 3)) * 0.3).astype(np.float32)
    dw_b = (rng.standard_normal((c,)) * 0.1).astype(np.float32)
    pw_w = (rng.standard_normal((k, c, 1, 1)) * (1.0 / np.sqrt(c))).astype(np.float32)
    pw_b = (rng.standard_normal((k,)) * 0.1).astype(np.float32)

    inits = [
        numpy_helper.from_array(dw_w, "dw.weight"),
        numpy_helper.from_array(dw_b, "dw.bias"),
        numpy_helper.from_array(pw_w, "pw.weight"),
        numpy_helper.from_array(pw_b, "pw.bias"),
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "relu6.min"),
        numpy_helper.from_array(np.array(6.0, dtype=np.float32), "relu6.max"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "dw.weight", "dw.bias"], ["dw_out"], name="dw_conv",
                         group=c, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1],
                         dilations=[1, 1]),
        helper.make_node("Clip", ["dw_out", "relu6.min", "relu6.max"], ["relu6_out"], name="relu6"),
        helper.make_node("Conv", ["relu6_out", "pw.weight", "pw.bias"], ["output"], name="pw_conv",
                         group=1, kernel_shape=[1, 1], pads=[0, 0, 0, 0], strides=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "dw_pw_block",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [n, c, h, w])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [n, k, h, w])],
        initializer=inits,
        value_info=[
            helper.make_tensor_value_info("dw_out", TensorProto.FLOAT, [n, c, h, w]),
            helper.make_tensor_value_info("relu6_out", TensorProto.FLOAT, [n, c, h, w]),
        ],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="tessera samples/make_samples.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    path = out("dw_pw_block.onnx")
    onnx.save_model(m, path)

    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    (y,) = run_ort(path, {"input": x})
    save_npy("dw_pw_block_input.npy", x)
    save_npy("dw_pw_block_output.npy", y)
    print(f"dw_pw_block: output {y.shape}, mean {float(y.mean()):.4f}")


# --------------------------------------------------------------------------
# opset21_mlp: IR 10 / opset 21, uses Gelu (added in opset 20)
# --------------------------------------------------------------------------

def make_opset21_mlp():
    rng = np.random.default_rng(7)
    b, d_in, d_hid, d_out = 4, 64, 128, 10
    w1 = (rng.standard_normal((d_in, d_hid)) / np.sqrt(d_in)).astype(np.float32)
    b1 = (rng.standard_normal((d_hid,)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((d_hid, d_hid)) / np.sqrt(d_hid)).astype(np.float32)
    b2 = (rng.standard_normal((d_hid,)) * 0.1).astype(np.float32)
    w3 = (rng.standard_normal((d_hid, d_out)) / np.sqrt(d_hid)).astype(np.float32)
    b3 = (rng.standard_normal((d_out,)) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(a, nm) for a, nm in
             [(w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"), (b2, "fc2.bias"),
              (w3, "fc3.weight"), (b3, "fc3.bias")]]
    nodes = [
        helper.make_node("MatMul", ["input", "fc1.weight"], ["fc1_mm"], name="fc1_matmul"),
        helper.make_node("Add", ["fc1_mm", "fc1.bias"], ["fc1_out"], name="fc1_add"),
        helper.make_node("Relu", ["fc1_out"], ["relu_out"], name="relu"),
        helper.make_node("MatMul", ["relu_out", "fc2.weight"], ["fc2_mm"], name="fc2_matmul"),
        helper.make_node("Add", ["fc2_mm", "fc2.bias"], ["fc2_out"], name="fc2_add"),
        helper.make_node("Gelu", ["fc2_out"], ["gelu_out"], name="gelu", approximate="tanh"),
        helper.make_node("MatMul", ["gelu_out", "fc3.weight"], ["fc3_mm"], name="fc3_matmul"),
        helper.make_node("Add", ["fc3_mm", "fc3.bias"], ["output"], name="fc3_add"),
    ]
    graph = helper.make_graph(
        nodes, "opset21_mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [b, d_in])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [b, d_out])],
        initializer=inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)],
                          producer_name="tessera samples/make_samples.py")
    m.ir_version = 10
    onnx.checker.check_model(m, full_check=True)
    path = out("opset21_mlp.onnx")
    onnx.save_model(m, path)

    x = rng.standard_normal((b, d_in), dtype=np.float32)
    (y,) = run_ort(path, {"input": x})
    save_npy("opset21_mlp_input.npy", x)
    save_npy("opset21_mlp_output.npy", y)
    print(f"opset21_mlp: output {y.shape}")


# --------------------------------------------------------------------------
# control_flow_if: If with two subgraphs, and a Loop
# --------------------------------------------------------------------------

def make_control_flow_if():
    f32 = TensorProto.FLOAT
    shape = [2, 8]

    # then: y = x * 2 ; else: y = x - 1. Both read the outer tensor "x" (implicit capture).
    then_graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["then_y"], name="then_mul")],
        "then_branch", [],
        [helper.make_tensor_value_info("then_y", f32, shape)],
        initializer=[numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")],
    )
    else_graph = helper.make_graph(
        [helper.make_node("Sub", ["x", "one"], ["else_y"], name="else_sub")],
        "else_branch", [],
        [helper.make_tensor_value_info("else_y", f32, shape)],
        initializer=[numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")],
    )

    # Loop body: (iter, cond, acc) -> (cond, acc + x). Runs trip_count times.
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond"),
            helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="body_add"),
        ],
        "loop_body",
        [
            helper.make_tensor_value_info("iter", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_in", f32, shape),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("acc_out", f32, shape),
        ],
    )

    nodes = [
        helper.make_node("ReduceSum", ["x"], ["x_sum"], name="sum_all", keepdims=0),
        helper.make_node("Greater", ["x_sum", "zero"], ["is_pos"], name="is_positive"),
        helper.make_node("If", ["is_pos"], ["if_out"], name="branch",
                         then_branch=then_graph, else_branch=else_graph),
        helper.make_node("Loop", ["trip_count", "loop_cond", "if_out"], ["loop_out"],
                         name="repeat_add", body=body),
        helper.make_node("Relu", ["loop_out"], ["output"], name="relu"),
    ]
    inits = [
        numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero"),
        numpy_helper.from_array(np.array(3, dtype=np.int64), "trip_count"),
        numpy_helper.from_array(np.array(True), "loop_cond"),
    ]
    graph = helper.make_graph(
        nodes, "control_flow_if",
        [helper.make_tensor_value_info("x", f32, shape)],
        [helper.make_tensor_value_info("output", f32, shape)],
        initializer=inits,
        value_info=[
            helper.make_tensor_value_info("x_sum", f32, []),
            helper.make_tensor_value_info("is_pos", TensorProto.BOOL, []),
            helper.make_tensor_value_info("if_out", f32, shape),
            helper.make_tensor_value_info("loop_out", f32, shape),
        ],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="tessera samples/make_samples.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    path = out("control_flow_if.onnx")
    onnx.save_model(m, path)

    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape, dtype=np.float32)
    (y,) = run_ort(path, {"x": x})
    want = np.maximum((x * 2 if x.sum() > 0 else x - 1) + 3 * x, 0)
    assert np.allclose(y, want, atol=1e-5), "control_flow_if: unexpected result"
    save_npy("control_flow_if_input.npy", x)
    save_npy("control_flow_if_output.npy", y)
    print("control_flow_if: ok")


# --------------------------------------------------------------------------
# symbolic_batch: input [N, 64] with a symbolic batch dim
# --------------------------------------------------------------------------

def make_symbolic_batch():
    rng = np.random.default_rng(5)
    w = (rng.standard_normal((32, 64)) / 8.0).astype(np.float32)  # transB=1: [out, in]
    b = (rng.standard_normal((32,)) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["input", "fc.weight", "fc.bias"], ["logits"], name="fc",
                         transB=1, alpha=1.0, beta=1.0),
        helper.make_node("Softmax", ["logits"], ["output"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "symbolic_batch",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 32])],
        initializer=[numpy_helper.from_array(w, "fc.weight"), numpy_helper.from_array(b, "fc.bias")],
        value_info=[helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 32])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="tessera samples/make_samples.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    path = out("symbolic_batch.onnx")
    onnx.save_model(m, path)

    x = rng.standard_normal((3, 64), dtype=np.float32)
    (y,) = run_ort(path, {"input": x})
    save_npy("symbolic_batch_input.npy", x)
    save_npy("symbolic_batch_output.npy", y)
    print(f"symbolic_batch: output {y.shape} for batch 3")


# --------------------------------------------------------------------------
# external_data/: weights in a separate file, written by hand
# --------------------------------------------------------------------------

def set_external(tensor, location, offset, length):
    """Turn an initializer into an external-data reference (raw bytes removed)."""
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key = key
        entry.value = value


def make_external_data():
    folder = out("external_data")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(99)
    w = (rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
    b = (rng.standard_normal((16,)) * 0.1).astype(np.float32)

    # Lay the tensors out with 64-byte alignment, as onnx's own writer may.
    blobs = [("conv.weight", w), ("conv.bias", b)]
    data = bytearray()
    inits = []
    for name, arr in blobs:
        pad = (-len(data)) % 64
        data += b"\0" * pad
        offset = len(data)
        raw = arr.astype("<f4").tobytes()
        data += raw
        t = numpy_helper.from_array(arr, name)
        set_external(t, "weights.bin", offset, len(raw))
        inits.append(t)
    with open(os.path.join(folder, "weights.bin"), "wb") as f:
        f.write(bytes(data))

    nodes = [
        helper.make_node("Conv", ["input", "conv.weight", "conv.bias"], ["conv_out"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv_out"], ["output"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "external_data",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 16, 16, 16])],
        initializer=inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="tessera samples/make_samples.py")
    m.ir_version = 8
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    onnx.checker.check_model(path, full_check=True)

    x = rng.standard_normal((1, 8, 16, 16), dtype=np.float32)
    (y,) = run_ort(path, {"input": x})
    save_npy(os.path.join("external_data", "input.npy"), x)
    save_npy(os.path.join("external_data", "output.npy"), y)
    print(f"external_data: weights.bin {len(data)} bytes")


# --------------------------------------------------------------------------
# expected.json
# --------------------------------------------------------------------------

def describe_value(vi):
    tt = vi.type.tensor_type
    dims = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append("?")
    return {"name": vi.name, "dtype": DTYPE_SHORT[tt.elem_type], "shape": dims}


def describe_model(rel_path):
    # load_external_data=False: count elements from dims, the bytes may be elsewhere.
    m = onnx.load(out(rel_path), load_external_data=False)
    g = m.graph
    init_names = {t.name for t in g.initializer}
    hist = {}
    for n in g.node:
        hist[n.op_type] = hist.get(n.op_type, 0) + 1
    params = 0
    param_bytes = 0
    for t in g.initializer:
        count = int(np.prod(list(t.dims), dtype=np.int64)) if len(t.dims) else 1
        params += count
        param_bytes += count * np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize
    default_opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    return {
        "nodes": len(g.node),
        "op_histogram": dict(sorted(hist.items())),
        "ir_version": m.ir_version,
        "default_opset": default_opset,
        "inputs": [describe_value(v) for v in g.input if v.name not in init_names],
        "outputs": [describe_value(v) for v in g.output],
        "parameters": params,
        "parameter_bytes": param_bytes,
        "initializers": len(g.initializer),
    }


SAMPLES = [
    "mobilenet_v2.onnx",
    "dw_pw_block.onnx",
    "opset21_mlp.onnx",
    "control_flow_if.onnx",
    "symbolic_batch.onnx",
    "external_data/model.onnx",
]


def write_expected():
    expected = {
        "_comment": "Generated by samples/make_samples.py from the onnx Python package "
                    f"{onnx.__version__}. Counts are for the main graph only (subgraph nodes not "
                    "counted); inputs exclude initializers; parameters = elements of all "
                    "main-graph initializers (values of Constant nodes and subgraph "
                    "initializers are not counted); parameter_bytes = parameters times "
                    "the element size.",
        "models": {p: describe_model(p) for p in SAMPLES},
    }
    with open(out("expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=2, sort_keys=False)
        f.write("\n")


def main():
    make_mobilenet_v2()
    make_dw_pw_block()
    make_opset21_mlp()
    make_control_flow_if()
    make_symbolic_batch()
    make_external_data()
    write_expected()
    print("wrote", out("expected.json"))


if __name__ == "__main__":
    main()
