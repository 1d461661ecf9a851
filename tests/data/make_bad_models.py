#!/usr/bin/env python3
"""Write the hostile-input corpus for the ONNX importer into tests/data/bad/.

    python3 tests/data/make_bad_models.py

Models are assembled as raw protobuf messages (onnx.ModelProto and friends) and
never passed through onnx.checker, which would refuse most of them. External
data files are written by hand. Everything is deterministic.

Alongside the files it writes bad/manifest.json:

    {"cases": [{"file": "bad/x.onnx", "valid": false,
                "expect": "<lowercase substring of the one-line error>"
                  or "expect_any": ["<one of these substrings>", ...],
                "what": "<one line description>"}, ...]}

Paths are relative to tests/data/. Cases with "valid": true are odd but legal
models (hostile names, unusual layouts) that must import without error; they
have "expect": "".

With --check it also reports, per file, what the onnx Python package's checker
and onnxruntime say about it (run in child processes, so a crash there is
reported rather than fatal). That is informational; the importer's verdict is
what the manifest states.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64

CASES = []


# --------------------------------------------------------------------------
# raw message builders (no validation on purpose)
# --------------------------------------------------------------------------

def vi(name, elem_type=F32, shape=None):
    v = ValueInfoProto()
    v.name = name
    if elem_type is not None:
        tt = v.type.tensor_type
        tt.elem_type = elem_type
        if shape is not None:
            tt.shape.SetInParent()
            for d in shape:
                dim = tt.shape.dim.add()
                if isinstance(d, str):
                    dim.dim_param = d
                else:
                    dim.dim_value = d
    return v


def attr_ints(name, values):
    a = AttributeProto()
    a.name = name
    a.type = AttributeProto.INTS
    a.ints.extend(values)
    return a


def attr_int(name, value):
    a = AttributeProto()
    a.name = name
    a.type = AttributeProto.INT
    a.i = value
    return a


def attr_float(name, value):
    a = AttributeProto()
    a.name = name
    a.type = AttributeProto.FLOAT
    a.f = value
    return a


def attr_string(name, value):
    a = AttributeProto()
    a.name = name
    a.type = AttributeProto.STRING
    a.s = value.encode()
    return a


def attr_graph(name, graph):
    a = AttributeProto()
    a.name = name
    a.type = AttributeProto.GRAPH
    a.g.CopyFrom(graph)
    return a


def node(op, inputs, outputs, name="", attrs=(), domain=None):
    n = NodeProto()
    n.op_type = op
    n.name = name
    n.input.extend(inputs)
    n.output.extend(outputs)
    if domain is not None:
        n.domain = domain
    for a in attrs:
        n.attribute.add().CopyFrom(a)
    return n


def tensor(name, array=None, dims=None, data_type=F32, raw=None):
    """A TensorProto; raw bytes and dims may disagree on purpose."""
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    if array is not None:
        array = np.ascontiguousarray(array)
        t.dims.extend(array.shape)
        t.raw_data = array.astype(array.dtype.newbyteorder("<")).tobytes()
    if dims is not None:
        del t.dims[:]
        t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    return t


def external(t, location, offset=None, length=None):
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is None:
            continue
        e = t.external_data.add()
        e.key = key
        e.value = str(value)
    return t


def graph(nodes, inputs, outputs, inits=(), name="g", value_info=()):
    g = GraphProto()
    g.name = name
    g.node.extend(nodes)
    g.input.extend(inputs)
    g.output.extend(outputs)
    g.initializer.extend(inits)
    g.value_info.extend(value_info)
    return g


def model(g, ir=8, opset=17, extra_opsets=()):
    m = ModelProto()
    m.ir_version = ir
    m.producer_name = "tessera tests/data/make_bad_models.py"
    if opset is not None:
        o = m.opset_import.add()
        o.domain = ""
        o.version = opset
    for dom, ver in extra_opsets:
        o = m.opset_import.add()
        o.domain = dom
        o.version = ver
    if g is not None:
        m.graph.CopyFrom(g)
    return m


def pb_varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def pb_bytes(field, payload):
    """Encode one length-delimited protobuf field."""
    return pb_varint(field << 3 | 2) + pb_varint(len(payload)) + payload


def pb_field(field, payload, message):
    """message serialized, with one more length-delimited field appended."""
    return message.SerializeToString() + pb_bytes(field, payload)


def rng(seed):
    return np.random.default_rng(seed)


def conv_weight(k=4, c=3, kh=3, kw=3, seed=0):
    return (rng(seed).standard_normal((k, c, kh, kw)) * 0.2).astype(np.float32)


def conv_model(conv_attrs=None, weight=None, inputs_of_conv=("x", "w", "b"), x_shape=(1, 3, 8, 8),
               y_shape=(1, 4, 8, 8), ir=8, opset=17):
    """x -> Conv(w, b) -> Relu -> y, the template most cases start from."""
    if conv_attrs is None:
        conv_attrs = [attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                      attr_ints("strides", [1, 1])]
    w = conv_weight() if weight is None else weight
    inits = [tensor("w", w), tensor("b", np.zeros(4, np.float32))]
    nodes = [
        node("Conv", list(inputs_of_conv), ["c"], "conv0", conv_attrs),
        node("Relu", ["c"], ["y"], "relu0"),
    ]
    return model(graph(nodes, [vi("x", F32, list(x_shape))], [vi("y", F32, list(y_shape))], inits),
                 ir=ir, opset=opset)


# --------------------------------------------------------------------------
# writing files and manifest entries
# --------------------------------------------------------------------------

def write_bytes(rel, data):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    assert len(data) < 100 * 1024, f"{rel} is too large ({len(data)} bytes)"


def case(file, what, expect=None, expect_any=None, valid=False, data=None, m=None):
    rel = "bad/" + file
    if m is not None:
        data = m.SerializeToString()
    write_bytes(rel, data)
    entry = {"file": rel, "valid": valid}
    if valid:
        entry["expect"] = ""
    elif expect_any:
        entry["expect_any"] = [s.lower() for s in expect_any]
    else:
        entry["expect"] = expect.lower()
    entry["what"] = what
    CASES.append(entry)


# --------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------

PARSE = ["parse", "protobuf", "corrupt", "truncated", "invalid", "malformed"]
NOT_PRODUCED = ["dangling", "not produced", "no producer", "undefined", "unknown", "not defined",
                "never produced"]
DUPLICATE = ["duplicate", "more than once", "twice", "already", "multiple", "redefin"]
SIZE = ["size", "bytes", "mismatch", "too large", "overflow", "length", "elements", "exceed"]
EXT_BOUNDS = ["offset", "length", "bounds", "beyond", "past", "exceed", "size", "range"]
OUTSIDE = ["outside", "escape", "not allowed", "absolute", "leaves", "traversal"]


def file_level_cases():
    case("empty.onnx", "zero-byte file", expect="empty", data=b"")

    full = conv_model().SerializeToString()
    case("truncated.onnx", "a valid Conv model cut to half its length (ends inside the weights)",
         expect_any=PARSE, data=full[: len(full) // 2])

    # Random bytes: the fixed seed is chosen so that protobuf cannot parse them.
    case("random_bytes.onnx", "4 KiB of random bytes", expect_any=PARSE,
         data=rng(2024).bytes(4096))

    header = model(None).SerializeToString()  # ir_version, producer, opset_import
    garbage = bytes([0x0F]) + rng(7).bytes(200)  # field 1 with wire type 7: never valid
    case("corrupt_protobuf.onnx",
         "valid ModelProto header fields followed by garbage (invalid wire type)",
         expect_any=PARSE, data=header + garbage)

    oid = hashlib.sha256(b"tessera mobilenet_v2.onnx").hexdigest()
    lfs = f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize 13992302\n"
    case("git_lfs_pointer.onnx",
         "a git-LFS pointer text file saved under the model's name (run git lfs pull)",
         expect="lfs", data=lfs.encode())

    case("no_graph.onnx", "ModelProto with ir_version and opset_import but no graph",
         expect="graph", m=model(None))

    case("no_opset_import.onnx", "model without any opset_import entry (required since IR 3)",
         expect="opset", m=conv_model(opset=None))

    # 200 If nodes nested inside each other's then_branch: a recursion bomb for
    # naive importers, and deeper than protobuf's default parse depth of 100.
    # The Python protobuf runtime refuses to build such a message, so the
    # nesting is encoded by hand (fields are length-delimited, order is free).
    leaf = graph([node("Identity", ["x"], ["o"], "leaf")], [], [vi("o", F32, [1])], name="leaf")
    leaf_bytes = leaf.SerializeToString()
    inner = leaf_bytes
    for i in range(200):
        then_attr = pb_field(6, inner, AttributeProto(name="then_branch", type=AttributeProto.GRAPH))
        else_attr = AttributeProto(name="else_branch", type=AttributeProto.GRAPH)
        else_attr.g.CopyFrom(leaf)
        if_node = node("If", ["cond"], ["o"], f"if{i}", [else_attr]).SerializeToString()
        if_node += pb_bytes(5, then_attr)
        shell = graph([], [], [vi("o", F32, [1])], name=f"level{i}")
        inner = pb_bytes(1, if_node) + shell.SerializeToString()
    top = inner + graph([], [vi("x", F32, [1]), vi("cond", TensorProto.BOOL, [])], []).SerializeToString()
    data = model(None).SerializeToString() + pb_bytes(7, top)
    case("deep_nesting.onnx", "200 levels of If nested in then_branch (600 protobuf message levels)",
         expect_any=PARSE + ["depth", "deep", "nest", "recursion", "limit"], data=data)


def version_cases():
    case("ir_version_99.onnx", "ir_version 99 (unknown future IR)",
         expect_any=["ir version", "ir_version", "irversion"], m=conv_model(ir=99))
    case("opset_99.onnx", "default-domain opset 99 (unknown future opset)",
         expect="opset", m=conv_model(opset=99))
    case("ir_version_0.onnx", "ir_version 0 (field missing)",
         expect_any=["ir version", "ir_version", "irversion"], m=conv_model(ir=0))


def graph_structure_cases():
    # a -> b -> a
    g = graph([node("Relu", ["x", "t2"], ["t1"], "first"), node("Relu", ["t1"], ["t2"], "second")],
              [vi("x", F32, [4])], [vi("t2", F32, [4])])
    g.node[0].op_type = "Add"
    case("cycle.onnx", "two nodes that consume each other's outputs (Add t2 -> Relu t1 -> t2)",
         expect="cycle", m=model(g))

    g = graph([node("Add", ["x", "self"], ["self"], "selfloop")], [vi("x", F32, [4])],
              [vi("self", F32, [4])])
    case("cycle_self.onnx", "a node that consumes its own output", expect="cycle", m=model(g))

    g = graph([node("Add", ["x", "ghost_tensor"], ["y"], "add_ghost")], [vi("x", F32, [4])],
              [vi("y", F32, [4])])
    case("dangling_input.onnx", "node input 'ghost_tensor' that no node, input or initializer defines",
         expect_any=NOT_PRODUCED, m=model(g))

    g = graph([node("Relu", ["x"], ["y"], "relu0")], [vi("x", F32, [4])],
              [vi("y", F32, [4]), vi("nowhere", F32, [4])])
    case("output_not_produced.onnx", "graph output 'nowhere' that nothing produces",
         expect_any=NOT_PRODUCED + ["output"], m=model(g))

    g = graph([node("Relu", ["x"], ["y"], "relu_a"), node("Sigmoid", ["x"], ["y"], "sigmoid_b")],
              [vi("x", F32, [4])], [vi("y", F32, [4])])
    case("duplicate_node_outputs.onnx", "two nodes both produce tensor 'y'",
         expect_any=DUPLICATE, m=model(g))

    w = conv_weight()
    m = conv_model()
    m.graph.initializer.append(tensor("w", w * 2))
    case("duplicate_initializer.onnx", "two initializers named 'w'", expect_any=DUPLICATE, m=m)

    g = graph([node("Add", ["x", "x"], ["y"], "add0")], [vi("x", F32, [4]), vi("x", F32, [4])],
              [vi("y", F32, [4])])
    case("duplicate_graph_input.onnx", "graph input 'x' listed twice",
         expect_any=DUPLICATE, m=model(g))

    g = graph([node("Relu", ["x"], ["x"], "overwrite")], [vi("x", F32, [4])], [vi("x", F32, [4])])
    case("node_overwrites_input.onnx", "node output named like the graph input it reads ('x')",
         expect_any=DUPLICATE + ["cycle"], m=model(g))

    g = graph([node("", ["x"], ["y"], "no_op_type")], [vi("x", F32, [4])], [vi("y", F32, [4])])
    case("empty_op_type.onnx", "node with an empty op_type",
         expect_any=["op_type", "op type", "optype", "operator"], m=model(g))

    g = graph([node("Relu", ["x"], ["y"], "relu0")], [vi("x", None)], [vi("y", F32, [4])])
    case("input_without_type.onnx", "graph input 'x' with no type at all",
         expect="type", m=model(g))

    m = conv_model()
    m.graph.initializer[1].data_type = 99
    case("initializer_bad_dtype.onnx", "initializer 'b' with data_type 99",
         expect="type", m=m)


def attribute_cases():
    g = graph([node("Cast", ["x"], ["y"], "cast_no_to")], [vi("x", F32, [4])], [vi("y", I64, [4])])
    case("cast_missing_to.onnx", "Cast without its required attribute 'to'",
         expect_any=["attribute", "attr"], m=model(g))

    g = graph([node("Concat", ["x", "x"], ["y"], "concat_no_axis")], [vi("x", F32, [2, 4])],
              [vi("y", F32, [4, 4])])
    case("concat_missing_axis.onnx", "Concat without its required attribute 'axis'",
         expect_any=["attribute", "attr"], m=model(g))

    case("conv_strides_float.onnx", "Conv 'strides' given as a FLOAT instead of INTS",
         expect_any=["attribute", "attr", "strides"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                       attr_float("strides", 1.0)]))

    case("conv_strides_string.onnx", "Conv 'strides' given as a STRING instead of INTS",
         expect_any=["attribute", "attr", "strides"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                       attr_string("strides", "1,1")]))

    # Declared INTS but the payload is in the float field.
    a = AttributeProto()
    a.name = "pads"
    a.type = AttributeProto.INTS
    a.floats.extend([1.0, 1.0, 1.0, 1.0])
    case("conv_pads_type_payload_mismatch.onnx",
         "Conv 'pads' declared INTS but carrying FLOATS values",
         expect_any=["attribute", "attr", "pads"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), a]))

    case("conv_group_string.onnx", "Conv 'group' as a STRING",
         expect_any=["attribute", "attr", "group"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                       attr_string("group", "one")]))


def conv_gemm_cases():
    case("conv_missing_weight.onnx", "Conv with only its data input (required weight W missing)",
         expect_any=["weight", "input"], m=conv_model(inputs_of_conv=("x",)))

    # Rank-1 weight: Debian's onnx 1.12 Conv shape inference reads dim(1) of it.
    case("conv_weight_rank1.onnx", "Conv weight of rank 1 (dims [108]) instead of rank 4",
         expect="rank",
         m=conv_model(conv_attrs=[attr_ints("pads", [1, 1, 1, 1])], weight=conv_weight().reshape(-1)))

    case("conv_kernel_shape_too_long.onnx",
         "Conv kernel_shape [3,3,3,3] on a 4-D input (2 spatial dims)",
         expect_any=["rank", "kernel_shape", "kernel shape", "kernel"],
         m=conv_model([attr_ints("kernel_shape", [3, 3, 3, 3]), attr_ints("pads", [1, 1, 1, 1])]))

    case("conv_input_rank2.onnx", "Conv on a rank-2 input [3, 8]",
         expect="rank", m=conv_model(x_shape=(3, 8)))

    case("conv_pads_wrong_length.onnx", "Conv pads with 3 values for 2 spatial dims",
         expect_any=["pads", "rank", "length", "size"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1])]))

    case("conv_group_mismatch.onnx", "Conv group=2 with 3 input channels",
         expect_any=["group", "channel"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                       attr_int("group", 2)]))

    case("conv_zero_stride.onnx", "Conv strides [0, 0]",
         expect_any=["stride"],
         m=conv_model([attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                       attr_ints("strides", [0, 0])]))

    w = (rng(3).standard_normal((4, 5)) * 0.1).astype(np.float32)
    g = graph([node("Gemm", ["a", "w"], ["y"], "gemm3d")], [vi("a", F32, [2, 3, 5])],
              [vi("y", F32, [2, 3, 4])], [tensor("w", w)])
    g.node[0].attribute.add().CopyFrom(attr_int("transB", 0))
    case("gemm_rank3.onnx", "Gemm with a rank-3 first input (Gemm needs rank-2 A and B)",
         expect="rank", m=model(g))

    g = graph([node("Gemm", ["a", "w"], ["y"], "gemm1d")], [vi("a", F32, [5])],
              [vi("y", F32, [4])], [tensor("w", np.ones(5, np.float32))])
    case("gemm_rank1.onnx", "Gemm with rank-1 inputs", expect="rank", m=model(g))


def tensor_data_cases():
    m = conv_model()
    m.graph.initializer[1].CopyFrom(tensor("b", dims=[-1, 4], raw=np.zeros(4, np.float32).tobytes()))
    case("negative_dims.onnx", "initializer 'b' with dims [-1, 4]", expect="negative", m=m)

    m = conv_model()
    m.graph.initializer[1].CopyFrom(tensor("b", dims=[10**12, 10**12], raw=b"\0" * 16))
    case("absurd_dims_overflow.onnx",
         "initializer with dims [1e12, 1e12] (element count overflows int64) and 16 bytes of data",
         expect_any=SIZE, m=m)

    m = conv_model()
    m.graph.initializer[1].CopyFrom(tensor("b", dims=[100000, 100000, 100], raw=b"\0" * 16))
    case("absurd_dims_huge.onnx",
         "initializer declaring 1e12 float elements (4 TB) with 16 bytes of raw_data",
         expect_any=SIZE, m=m)

    m = conv_model()
    m.graph.initializer[1].CopyFrom(tensor("b", dims=[1000000, 1000000]))
    case("absurd_dims_no_data.onnx",
         "initializer declaring 1e12 elements with no data field at all",
         expect_any=SIZE + ["data", "empty"], m=m)

    m = conv_model()
    m.graph.initializer[0].raw_data = m.graph.initializer[0].raw_data[:100]
    case("raw_data_mismatch.onnx",
         "weight 'w' dims [4,3,3,3] f32 (432 bytes) with 100 bytes of raw_data",
         expect_any=SIZE, m=m)

    m = conv_model()
    t = m.graph.initializer[1]
    t.ClearField("raw_data")
    t.float_data.extend([0.0, 0.0, 0.0])
    case("typed_data_mismatch.onnx", "bias 'b' dims [4] with 3 values in float_data",
         expect_any=SIZE + ["count"], m=m)

    m = conv_model()
    t = m.graph.initializer[1]
    t.ClearField("raw_data")
    t.data_type = I64
    t.int64_data.extend([0, 0, 0, 0])
    case("initializer_dtype_conflict.onnx",
         "Conv bias 'b' stored as int64 while the data input is float",
         expect_any=["type", "dtype", "mismatch"], m=m)


def external_cases():
    w = conv_weight()
    raw_w = w.astype("<f4").tobytes()
    raw_b = np.zeros(4, np.float32).tobytes()

    def ext_model(w_loc, w_off, w_len, b_loc=None):
        m = conv_model()
        external(m.graph.initializer[0], w_loc, w_off, w_len)
        if b_loc is not None:
            external(m.graph.initializer[1], b_loc, 0, len(raw_b))
        return m

    case("ext_missing_file.onnx", "external data location 'ext_missing_file.bin' does not exist",
         expect="external", m=ext_model("ext_missing_file.bin", 0, len(raw_w)))

    write_bytes("bad/ext_short.bin", raw_w[:200])
    case("ext_offset_out_of_bounds.onnx",
         "external data offset 4096 past the end of a 200-byte file",
         expect_any=EXT_BOUNDS, m=ext_model("ext_short.bin", 4096, len(raw_w)))
    case("ext_length_out_of_bounds.onnx",
         "external data offset 0 length 432 in a 200-byte file",
         expect_any=EXT_BOUNDS, m=ext_model("ext_short.bin", 0, len(raw_w)))
    case("ext_length_huge.onnx",
         "external data length 2^62 (must not allocate it)",
         expect_any=EXT_BOUNDS, m=ext_model("ext_short.bin", 0, 2**62))
    case("ext_offset_negative.onnx", "external data offset -8",
         expect_any=EXT_BOUNDS + ["negative", "invalid"], m=ext_model("ext_short.bin", -8, 100))
    case("ext_offset_not_a_number.onnx", "external data offset 'abc'",
         expect_any=EXT_BOUNDS + ["invalid", "number", "integer"],
         m=ext_model("ext_short.bin", "abc", len(raw_w)))

    write_bytes("bad/ext_good.bin", raw_w + raw_b)
    case("ext_length_mismatch.onnx",
         "external data with length 400 for a [4,3,3,3] f32 tensor (432 bytes)",
         expect_any=SIZE, m=ext_model("ext_good.bin", 0, 400))

    case("ext_path_parent.onnx",
         "external data location '../../etc/passwd' escapes the model's folder",
         expect_any=OUTSIDE, m=ext_model("../../etc/passwd", 0, len(raw_w)))
    case("ext_path_absolute.onnx", "external data location '/etc/passwd' (absolute path)",
         expect_any=OUTSIDE, m=ext_model("/etc/passwd", 0, len(raw_w)))
    case("ext_path_sneaky.onnx",
         "external data location 'ext_good_dir/../../../etc/passwd' (climbs out after a subfolder)",
         expect_any=OUTSIDE, m=ext_model("ext_good_dir/../../../etc/passwd", 0, len(raw_w)))
    case("ext_path_backslash.onnx",
         "external data location '..\\\\..\\\\secret.bin' (Windows-style parent path)",
         expect_any=OUTSIDE + ["external"], m=ext_model("..\\..\\secret.bin", 0, len(raw_w)))
    case("ext_location_is_dir.onnx", "external data location '.' (the model's own folder)",
         expect="external", m=ext_model(".", 0, len(raw_w)))
    case("ext_location_empty.onnx", "external data with an empty location",
         expect_any=["external", "location"], m=ext_model("", 0, len(raw_w)))

    m = conv_model()
    t = m.graph.initializer[0]
    t.data_location = TensorProto.EXTERNAL
    case("ext_no_location.onnx",
         "data_location EXTERNAL with no external_data entries (and raw_data still present)",
         expect_any=["external", "location"], m=m)

    # A valid one: data in a subfolder of the model's folder, with offsets.
    write_bytes("bad/ext_good_dir/weights.bin", b"\xAB" * 16 + raw_w + raw_b)
    m = conv_model()
    external(m.graph.initializer[0], "ext_good_dir/weights.bin", 16, len(raw_w))
    external(m.graph.initializer[1], "ext_good_dir/weights.bin", 16 + len(raw_w), len(raw_b))
    case("ext_subfolder_ok.onnx",
         "VALID: external data in a subfolder of the model's folder, non-zero offsets",
         valid=True, m=m)


def valid_hostile_cases():
    # Names that break naive DOT/JSON/HTML/C-comment emitters.
    names = {
        "x": "input \"quoted\" 'single'",
        "w": "weights/ünïcødé/重み/βeta→γ 🔥",
        "b": "bias */ /* not a comment",
        "c": "line1\nline2\r\n\ttabbed",
        "y": "<b>&amp; html</b> {braces} [brackets] %s %n \\back\\slash",
    }
    w = conv_weight()
    nodes = [
        node("Conv", [names["x"], names["w"], names["b"]], [names["c"]],
             "conv \"one\" */ 节点\n2",
             [attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1])]),
        node("Relu", [names["c"]], [names["y"]], "-> node graph digraph ;"),
    ]
    g = graph(nodes, [vi(names["x"], F32, [1, 3, 8, 8])], [vi(names["y"], F32, [1, 4, 8, 8])],
              [tensor(names["w"], w), tensor(names["b"], np.zeros(4, np.float32))],
              name="graph with \"quotes\" and */")
    case("names_hostile.onnx",
         "VALID: tensor and node names with quotes, unicode, emoji, newlines, tabs, */, HTML and DOT syntax",
         valid=True, m=model(g))

    m = conv_model()
    for n in m.graph.node:
        n.name = ""
    case("names_empty.onnx", "VALID: every node name is empty (names are optional in ONNX)",
         valid=True, m=m)

    g = graph([node("Relu", ["x"], ["a"], ""), node("Sigmoid", ["a"], ["b"], ""),
               node("Relu", ["b"], ["y"], "same"), ],
              [vi("x", F32, [4])], [vi("y", F32, [4])])
    g.node[1].name = "same"
    case("names_duplicate_node_names.onnx",
         "VALID: two nodes share the node name 'same' (onnx checker accepts; onnxruntime refuses; names are for diagnostics, key nodes by index)",
         valid=True, m=model(g))

    long_name = "L" * 20000
    g = graph([node("Relu", ["x"], [long_name], long_name), node("Relu", [long_name], ["y"], "r2")],
              [vi("x", F32, [4])], [vi("y", F32, [4])])
    case("names_very_long.onnx", "VALID: a node and a tensor name of 20,000 characters",
         valid=True, m=model(g))

    g = graph([node("Relu", [" "], ["0"], "1"), node("Neg", ["0"], ["y"], "2")],
              [vi(" ", F32, [2])], [vi("y", F32, [2])])
    case("names_whitespace_digits.onnx",
         "VALID: an input named ' ' (a space) and tensors named by digits",
         valid=True, m=model(g))

    g = graph([node("Clip", ["x", "", "hi"], ["y"], "clip_max_only")], [vi("x", F32, [4])],
              [vi("y", F32, [4])], [tensor("hi", np.array(6.0, np.float32))])
    case("optional_input_empty.onnx",
         "VALID: Clip with its optional 'min' input left out as an empty name ('') between others",
         valid=True, m=model(g))

    # Initializer also listed as a graph input (older exporters do this).
    m = conv_model()
    m.graph.input.append(vi("w", F32, [4, 3, 3, 3]))
    m.graph.input.append(vi("b", F32, [4]))
    case("initializer_as_input.onnx",
         "VALID: initializers 'w' and 'b' also listed as graph inputs (IR < 4 style)",
         valid=True, m=m)

    g = graph([node("Relu", ["x"], ["t"], "relu0"),
               node("MyCustomOp", ["t"], ["y"], "custom0", [attr_int("level", 3)],
                    domain="com.example")],
              [vi("x", F32, [4])], [vi("y", F32, [4])])
    case("custom_domain_op.onnx",
         "VALID: an op from a custom domain 'com.example' (import it, mark it without code generator)",
         valid=True, m=model(g, extra_opsets=[("com.example", 1)]))


# --------------------------------------------------------------------------
# optional report on what onnx / onnxruntime make of each file
# --------------------------------------------------------------------------

PROBE = r"""
import sys, onnx
path = sys.argv[1]
try:
    m = onnx.load(path, load_external_data=False)
except Exception as e:
    print("load: " + type(e).__name__ + ": " + str(e).splitlines()[0][:100] if str(e) else "load: " + type(e).__name__); sys.exit(0)
try:
    onnx.checker.check_model(path, full_check=True)
    print("checker: ok")
except Exception as e:
    print("checker: " + (str(e).strip().splitlines() or [type(e).__name__])[0][:120])
"""


def check():
    print(f"{'file':45} {'valid':5} onnx {sys.modules['onnx'].__version__} says")
    for c in CASES:
        path = os.path.join(HERE, c["file"])
        try:
            r = subprocess.run([sys.executable, "-c", PROBE, path], capture_output=True, text=True,
                               timeout=60)
            msg = r.stdout.strip() or f"(exit {r.returncode}) {r.stderr.strip()[-100:]}"
        except subprocess.TimeoutExpired:
            msg = "TIMEOUT"
        print(f"{c['file'][4:]:45} {str(c['valid']):5} {msg}")


def main():
    if os.path.isdir(BAD):
        shutil.rmtree(BAD)
    os.makedirs(BAD)
    file_level_cases()
    version_cases()
    graph_structure_cases()
    attribute_cases()
    conv_gemm_cases()
    tensor_data_cases()
    external_cases()
    valid_hostile_cases()

    files = [c["file"] for c in CASES]
    assert len(files) == len(set(files)), "duplicate case file names"
    with open(os.path.join(BAD, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": CASES}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    n_valid = sum(c["valid"] for c in CASES)
    print(f"wrote {len(CASES)} cases ({len(CASES) - n_valid} invalid, {n_valid} valid) to {BAD}")
    if "--check" in sys.argv:
        check()


if __name__ == "__main__":
    main()
