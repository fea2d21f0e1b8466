//===- LoweringKinds.h - how attention and convolutions lower ---*- C++ -*-===//
//
// Part of Ober-Train. The values of convert-ober-to-linalg's `attention`
// and `convolutions` options, which the tools' `--attention` and a plan's
// `attention=` and `convolutions=` take too, in one place.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_CONVERSION_LOWERINGKINDS_H
#define OBER_CONVERSION_LOWERINGKINDS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::ober {

/// The kinds, as an error message lists them.
constexpr llvm::StringLiteral kAttentionKinds =
    "blocked, decomposed, fused, flash";

/// Whether `kind` is one of kAttentionKinds.
inline bool isAttentionKind(llvm::StringRef kind) {
  return kind == "blocked" || kind == "decomposed" || kind == "fused" ||
         kind == "flash";
}

/// Why `flash` cannot compile for the CPU.
constexpr llvm::StringLiteral kFlashNeedsCUDA =
    "--attention=flash runs on CUDA GPUs (ober-compile --target=cuda); the "
    "CPU takes blocked, decomposed or fused";

/// How convolutions lower: the kernel library's convolutions, or matrix
/// products over the windows gathered into columns (im2col).
constexpr llvm::StringLiteral kLibraryConvolutions = "library";
constexpr llvm::StringLiteral kGemmConvolutions = "gemm";
/// The kinds, as an error message lists them.
constexpr llvm::StringLiteral kConvolutionKinds = "library, gemm";

/// Whether `kind` is one of kConvolutionKinds.
inline bool isConvolutionKind(llvm::StringRef kind) {
  return kind == kLibraryConvolutions || kind == kGemmConvolutions;
}

/// The CUDA target's: it has no convolution library.
constexpr llvm::StringLiteral kCUDAConvolutions = kGemmConvolutions;

} // namespace mlir::ober

#endif // OBER_CONVERSION_LOWERINGKINDS_H
