//===- Convolution.h - a convolution's geometry ---------------*- C++ -*-===//
//
// Part of Ober-Train. What both lowerings of the convolutions read: the
// kernel library's calls (Convolutions.cpp) and the matrix products over
// gathered windows (ConvolutionsAsGemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_CONVERSION_OBERTOLINALG_CONVOLUTION_H
#define OBER_LIB_CONVERSION_OBERTOLINALG_CONVOLUTION_H

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ober::lowering {

/// One forward convolution: input `[n, c, in...]`, weight `[o, c / groups,
/// kernel...]`, output `[n, o, out...]`.
struct ConvGeometry {
  int64_t n = 0, c = 0, o = 0, groups = 1;
  bool bias = false;
  SmallVector<int64_t> in, kernel, out, stride, dilation, padBegin, padEnd;

  size_t rank() const { return in.size(); }

  /// The input extent the windows of output `i` reach.
  int64_t reach(size_t i) const {
    return (out[i] - 1) * stride[i] - padBegin[i] +
           dilation[i] * (kernel[i] - 1) + 1;
  }

  bool empty() const {
    return n == 0 || c == 0 || o == 0 ||
           llvm::any_of(in, [](int64_t d) { return d == 0; }) ||
           llvm::any_of(out, [](int64_t d) { return d == 0; });
  }
};

/// The forward convolution behind each op, when its shapes are static
/// (failure otherwise): `conv`'s own; `conv_transpose`'s is the
/// convolution from its result to its input (its weight `[C, O / groups,
/// K...]` read as `[O, C / groups, K...]`), whose data gradient it is;
/// `conv_weight_grad`'s is from its input to its output gradient.
FailureOr<ConvGeometry> convGeometry(ConvOp op);
FailureOr<ConvGeometry> convGeometry(ConvTransposeOp op);
FailureOr<ConvGeometry> convGeometry(ConvWeightGradOp op);

} // namespace mlir::ober::lowering

#endif // OBER_LIB_CONVERSION_OBERTOLINALG_CONVOLUTION_H
