//===- TensorProto.h - ONNX TensorProto decoding ----------------*- C++ -*-===//
//
// Part of Ober-Train. Internal to the ONNX importer.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_IMPORTERS_ONNX_TENSORPROTO_H
#define OBER_LIB_IMPORTERS_ONNX_TENSORPROTO_H

#include "ober/Reference/Tensor.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>

namespace mlir::ober::onnx_import {

/// The ober element type of an ONNX TensorProto data type, or null.
Type elementTypeOf(MLIRContext *context, int32_t dataType);

/// ONNX's name for a data type (FLOAT, INT64, ...).
const char *dataTypeName(int32_t dataType);

/// Decodes `proto` (inline or external data under `baseDir`). External paths
/// must be relative and stay inside `baseDir`. Returns nullopt and sets
/// `error` on malformed or unsupported data.
std::optional<reference::Tensor> decodeTensor(MLIRContext *context,
                                              const onnx::TensorProto &proto,
                                              StringRef baseDir,
                                              std::string &error);

/// Checks `proto`'s data without reading it: the type, the shape, the inline
/// size, or the external file's location (inside `baseDir`) and size.
bool validateTensorData(const onnx::TensorProto &proto, StringRef baseDir,
                        std::string &error);

} // namespace mlir::ober::onnx_import

#endif // OBER_LIB_IMPORTERS_ONNX_TENSORPROTO_H
