//===- Schema.h - ONNX operator schemas -------------------------*- C++ -*-===//
//
// Part of Ober-Train. Internal to the ONNX importer. The schemas come from
// libonnx, which needs C++ exceptions: Schema.cpp is the one file built with
// them.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_IMPORTERS_ONNX_SCHEMA_H
#define OBER_LIB_IMPORTERS_ONNX_SCHEMA_H

#include "onnx/onnx_pb.h"

#include <string>
#include <vector>

namespace mlir::ober::onnx_import {

/// Checks that `node` supplies every required input and output of its op's
/// schema at `opset` (default domain). Returns a message naming the missing
/// input or output, or an empty string.
/// Whether `domain` is ONNX's default one ("" or "ai.onnx").
inline bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

std::string checkArity(const onnx::NodeProto &node, int opset);

/// What input #`i` of `node`'s op takes at `opset` by its schema: a
/// sequence (1), a tensor (0), either or unknown (-1).
int inputTakesSequence(const onnx::NodeProto &node, int opset, int i);

/// Whether input #`i` of `node`'s op at `opset` takes a tensor of any of
/// `dataTypes` (TensorProto data types: those that import as the input's
/// element type), by the schema's type constraint; true when the schema
/// does not say. Otherwise `allowed` lists what it takes ("float, double").
bool inputTakesType(const onnx::NodeProto &node, int opset, int i,
                    const std::vector<int> &dataTypes, std::string &allowed);

/// Parses a model in ONNX's text format (`<ir_version: 8, opset_import:
/// ["" : 18]> graph (float[N] x) => (float[N] y) { y = Relu(x) }`); false,
/// with the parser's message in `error`, when it is not one.
bool parseTextModel(const std::string &text, onnx::ModelProto &model,
                    std::string &error);

} // namespace mlir::ober::onnx_import

#endif // OBER_LIB_IMPORTERS_ONNX_SCHEMA_H
