//===- Schema.cpp - ONNX operator schemas ---------------------------------===//
//
// Part of Ober-Train. Built with exceptions (libonnx's headers need them).
//
//===----------------------------------------------------------------------===//

#include "Schema.h"

#include "onnx/defs/schema.h"

std::string mlir::ober::onnx_import::checkArity(const onnx::NodeProto &node,
                                                int opset) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
  if (!schema)
    return "";
  auto check = [&](const std::vector<onnx::OpSchema::FormalParameter> &formals,
                   const auto &actual, const char *what) -> std::string {
    for (size_t i = 0; i < formals.size(); ++i) {
      if (formals[i].GetOption() != onnx::OpSchema::Single)
        continue;
      if (static_cast<int>(i) >= actual.size() || actual.Get(i).empty())
        return std::string("required ") + what + " #" + std::to_string(i) +
               " '" + formals[i].GetName() + "' is missing";
    }
    if (actual.size() > schema->max_input() && std::string(what) == "input")
      return "takes at most " + std::to_string(schema->max_input()) +
             " inputs, got " + std::to_string(actual.size());
    if (actual.size() > schema->max_output() && std::string(what) == "output")
      return "has at most " + std::to_string(schema->max_output()) +
             " outputs, got " + std::to_string(actual.size());
    return "";
  };
  std::string error = check(schema->inputs(), node.input(), "input");
  if (error.empty())
    error = check(schema->outputs(), node.output(), "output");
  return error;
}
