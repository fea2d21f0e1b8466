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

namespace mlir::ober::onnx_import {

/// Checks that `node` supplies every required input and output of its op's
/// schema at `opset` (default domain). Returns a message naming the missing
/// input or output, or an empty string.
std::string checkArity(const onnx::NodeProto &node, int opset);

/// What input #`i` of `node`'s op takes at `opset` by its schema: a
/// sequence (1), a tensor (0), either or unknown (-1).
int inputTakesSequence(const onnx::NodeProto &node, int opset, int i);

} // namespace mlir::ober::onnx_import

#endif // OBER_LIB_IMPORTERS_ONNX_SCHEMA_H
