"""Writes argv[1]: what a default torch.onnx.export makes of parameters: an
initializer standing for two identical ones (the other an Identity of it)
and one folded from parameters (named onnx::MatMul_7)."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

w = numpy_helper.from_array(np.arange(9, dtype=np.float32).reshape(3, 3),
                            "onnx::MatMul_7")
b = numpy_helper.from_array(np.zeros(3, np.float32), "layer0.bias")
nodes = [
    helper.make_node("Identity", ["layer0.bias"], ["layer1.bias"]),
    helper.make_node("MatMul", ["x", "onnx::MatMul_7"], ["m"]),
    helper.make_node("Add", ["m", "layer0.bias"], ["a"]),
    helper.make_node("Add", ["a", "layer1.bias"], ["y"]),
]
graph = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w, b])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
     sys.argv[1])
