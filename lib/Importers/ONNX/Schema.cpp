//===- Schema.cpp - ONNX operator schemas ---------------------------------===//
//
// Part of Ober-Train. Built with exceptions (libonnx's headers need them).
//
//===----------------------------------------------------------------------===//

#include "Schema.h"

#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"

#include <algorithm>

namespace {
/// The newest opset libonnx 1.12's schemas describe.
constexpr int kRegistryOpset = 17;

/// Ops whose inputs, outputs or attributes changed in opsets 18 to 21,
/// after libonnx's schemas: their handlers check such nodes themselves
/// (axes as an input, Split's num_outputs, DFT's axis input, ...).
bool changedAfterRegistry(const std::string &op) {
  static const char *const kChanged[] = {
      "AveragePool", "CenterCropPad", "Col2Im", "DFT", "GridSample",
      "GroupNormalization", "LpPool", "OptionalGetElement",
      "OptionalHasElement", "Pad", "ReduceL1", "ReduceL2", "ReduceLogSum",
      "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
      "ReduceSumSquare", "Resize", "ScatterElements", "ScatterND", "Split"};
  return std::find(std::begin(kChanged), std::end(kChanged), op) !=
         std::end(kChanged);
}

/// `node`'s schema at `opset`; null for ops the registry does not describe
/// at that opset.
const onnx::OpSchema *schemaOf(const onnx::NodeProto &node, int opset) {
  if (opset > kRegistryOpset && changedAfterRegistry(node.op_type()))
    return nullptr;
  return onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
}
} // namespace

std::string mlir::ober::onnx_import::checkArity(const onnx::NodeProto &node,
                                                int opset) {
  if (opset > kRegistryOpset && changedAfterRegistry(node.op_type()))
    return "";
  const onnx::OpSchema *schema = schemaOf(node, opset);
  if (!schema) {
    // An op of the default domain that the model's opset predates.
    const onnx::OpSchema *later =
        isDefaultDomain(node.domain()) ? onnx::OpSchemaRegistry::Schema(node.op_type(), 1000, "")
                 : nullptr;
    if (later)
      return node.op_type() + " exists from opset " +
             std::to_string(later->since_version()) +
             " on; the model imports opset " + std::to_string(opset);
    return "";
  }
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

namespace {
/// The formal parameter of input #`i` of `node`'s op at `opset` (a variadic
/// last input covers the rest); null when the schema does not say.
const onnx::OpSchema::FormalParameter *
inputFormal(const onnx::NodeProto &node, int opset, int i) {
  const onnx::OpSchema *schema = schemaOf(node, opset);
  if (!schema || schema->inputs().empty() || i < 0)
    return nullptr;
  const auto &formals = schema->inputs();
  const onnx::OpSchema::FormalParameter &formal =
      formals[std::min<size_t>(i, formals.size() - 1)];
  if (static_cast<size_t>(i) >= formals.size() &&
      formal.GetOption() != onnx::OpSchema::Variadic)
    return nullptr;
  return &formal;
}
} // namespace

bool mlir::ober::onnx_import::inputTakesType(const onnx::NodeProto &node,
                                             int opset, int i,
                                             const std::vector<int> &dataTypes,
                                             std::string &allowed) {
  const onnx::OpSchema::FormalParameter *formal = inputFormal(node, opset, i);
  if (!formal || formal->GetTypes().empty())
    return true;
  for (int dataType : dataTypes) {
    std::string name = onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dataType));
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    try {
      if (formal->GetTypes().count(onnx::Utils::DataTypeUtils::ToType(
              "tensor(" + name + ")")))
        return true;
    } catch (const std::exception &) {
      // A data type this libonnx has no type string for.
    }
  }
  std::vector<std::string> names;
  for (onnx::DataType type : formal->GetTypes())
    if (type && type->rfind("tensor(", 0) == 0)
      names.push_back(type->substr(7, type->size() - 8));
  std::sort(names.begin(), names.end());
  allowed.clear();
  for (const std::string &n : names)
    allowed += (allowed.empty() ? "" : ", ") + n;
  return false;
}

int mlir::ober::onnx_import::inputTakesSequence(const onnx::NodeProto &node,
                                                int opset, int i) {
  const onnx::OpSchema::FormalParameter *formal = inputFormal(node, opset, i);
  if (!formal)
    return -1;
  bool sequence = false, tensor = false;
  for (onnx::DataType type : formal->GetTypes()) {
    bool seq = type && type->rfind("seq(", 0) == 0;
    sequence |= seq;
    tensor |= !seq;
  }
  return sequence == tensor ? -1 : sequence ? 1 : 0;
}

bool mlir::ober::onnx_import::parseTextModel(const std::string &text,
                                             onnx::ModelProto &model,
                                             std::string &error) {
  try {
    onnx::Status status = onnx::OnnxParser::Parse(model, text.c_str());
    if (status.IsOK())
      return true;
    error = status.ErrorMessage();
  } catch (const std::exception &e) {
    error = e.what();
  }
  return false;
}
