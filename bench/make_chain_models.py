#!/usr/bin/env python3
"""Writes synthetic chain models for the import/layout benchmarks: N nodes alternating
Relu / Add(bias) / Sigmoid / Mul(scale) on a [1,64] tensor. Usage: make_chain_models.py OUT_DIR N..."""
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def chain(n: int) -> onnx.ModelProto:
    nodes, inits = [], []
    prev = "x"
    for i in range(n):
        out = f"t{i}"
        kind = i % 4
        if kind == 0:
            nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu_{i}"))
        elif kind == 1:
            b = f"b{i}"
            inits.append(numpy_helper.from_array(np.full([64], 0.01 * i, np.float32), b))
            nodes.append(helper.make_node("Add", [prev, b], [out], name=f"add_{i}"))
        elif kind == 2:
            nodes.append(helper.make_node("Sigmoid", [prev], [out], name=f"sigmoid_{i}"))
        else:
            s = f"s{i}"
            inits.append(numpy_helper.from_array(np.full([64], 0.5, np.float32), s))
            nodes.append(helper.make_node("Mul", [prev, s], [out], name=f"mul_{i}"))
        prev = out
    g = helper.make_graph(nodes, f"chain{n}",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 64])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


if __name__ == "__main__":
    out_dir = sys.argv[1]
    for n in map(int, sys.argv[2:]):
        onnx.save(chain(n), f"{out_dir}/chain_{n}.onnx")
        print(f"{out_dir}/chain_{n}.onnx")
