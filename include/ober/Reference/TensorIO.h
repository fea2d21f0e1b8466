//===- TensorIO.h - reference tensors to and from files ---------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_REFERENCE_TENSORIO_H
#define OBER_REFERENCE_TENSORIO_H

#include "ober/Reference/Tensor.h"
#include "ober/Runtime/DType.h"
#include "ober/Runtime/Npy.h"

#include <optional>
#include <string>

namespace mlir::ober {
/// The runtime library lives in ::ober::rt (it does not depend on MLIR).
namespace rt = ::ober::rt;
} // namespace mlir::ober

namespace mlir::ober::reference {

/// The runtime dtype of an MLIR element type, if it has one.
std::optional<rt::DType> dtypeOf(Type elementType);

/// The MLIR element type of a runtime dtype (U8 and I16 have none).
Type elementTypeOf(MLIRContext *context, rt::DType dtype);

/// Decodes little-endian `bytes` of `dtype` into a tensor of `elementType`
/// and `shape`. Floats convert between float types (bf16 tensors accept
/// float32 data, since NumPy has no bfloat16); otherwise the dtype must be
/// the element type's. Returns nullopt and sets `error` on a mismatch.
std::optional<Tensor> decodeTensor(rt::DType dtype, ArrayRef<int64_t> shape,
                                   const std::vector<char> &bytes,
                                   Type elementType, std::string &error);

/// Encodes a tensor for a file. bf16 is written as float32 when
/// `bf16AsF32` is set (for .npy), as bfloat16 otherwise.
void encodeTensor(const Tensor &tensor, bool bf16AsF32, rt::DType &dtype,
                  std::vector<char> &bytes);

/// As .npy (bf16 widened to float32).
rt::NpyArray toNpy(const Tensor &tensor);

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_TENSORIO_H
