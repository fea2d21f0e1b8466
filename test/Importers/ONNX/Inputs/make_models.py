"""Writes the ONNX models of malformed.test into the folder argv[1]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "data.bin"), "wb") as f:
    f.write(np.array([1, 2, 3, 4], dtype=np.float32).tobytes())
np.save(os.path.join(out, "x.npy"), np.array([1, 2, 3, 4], dtype=np.float32))


def external(name, location, length=None):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", location
    if length is not None:
        entry = t.external_data.add()
        entry.key, entry.value = "length", str(length)
    return t


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(out, name + ".onnx"))


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
add = helper.make_node("Add", ["x", "c"], ["y"])
save("escape", [add], [x], [y], [external("c", "../secret.bin")])
save("absolute", [add], [x], [y], [external("c", "/etc/passwd")])
with open(os.path.join(out, "short.bin"), "wb") as f:
    f.write(b"\0" * 8)
save("short", [add], [x], [y], [external("c", "data.bin", length=8)])
save("external", [add], [x], [y], [external("c", "data.bin")])
save("opset22", [helper.make_node("Relu", ["x"], ["y"])], [x], [y], opset=22)
s = helper.make_tensor_value_info("s", TensorProto.UINT16, [1])
save("uint16-input", [helper.make_node("Identity", ["s"], ["y"])], [s], [y])
noshape = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
save("no-shape", [helper.make_node("Relu", ["x"], ["y"])], [noshape], [y])
x23 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
shape = helper.make_tensor("shape", TensorProto.INT64, [2], [2, 2])
save("bad-reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"])], [x23],
     [y], [shape])
save("undefined", [helper.make_node("Relu", ["nowhere"], ["y"])], [x], [y])
# Variadic ops whose inputs are all omitted ("").
save("empty-concat", [helper.make_node("Concat", ["", ""], ["y"], axis=0)], [x], [y])
save("empty-sum", [helper.make_node("Sum", [""], ["y"])], [x], [y])
