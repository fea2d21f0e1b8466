"""Writes LSTM/RNN models ober refuses into argv[1]: <name>.onnx."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
seq, batch, inp, hidden = 3, 2, 4, 5


def model(name, op, gates, attrs=None, w_rows=None, extra_inputs=()):
    w = numpy_helper.from_array(
        np.ones((1, w_rows or gates * hidden, inp), np.float32), "W")
    r = numpy_helper.from_array(
        np.ones((1, gates * hidden, hidden), np.float32), "R")
    inits = [w, r]
    inputs = ["X", "W", "R"] + list(extra_inputs)
    if "lens" in extra_inputs:
        inits.append(numpy_helper.from_array(np.array([3, 2], np.int32),
                                             "lens"))
    node = helper.make_node(op, inputs, ["Y"], hidden_size=hidden,
                            **(attrs or {}))
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       [seq, batch, inp])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
         os.path.join(out, name + ".onnx"))


model("activations", "LSTM", 4, {"activations": ["Relu", "Tanh", "Tanh"]})
model("clip", "LSTM", 4, {"clip": 3.0})
model("lens", "LSTM", 4, extra_inputs=("", "lens"))
model("weights", "LSTM", 4, w_rows=3 * hidden)
model("direction", "RNN", 1, {"direction": "sideways"})
