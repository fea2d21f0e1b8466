//===- AttentionKinds.h - the ways attention lowers -------------*- C++ -*-===//
//
// Part of Ober-Train. The values of convert-ober-to-linalg's `attention`
// option, which the tools' `--attention` and a plan's `attention=` take
// too, in one place.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_CONVERSION_ATTENTIONKINDS_H
#define OBER_CONVERSION_ATTENTIONKINDS_H

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

} // namespace mlir::ober

#endif // OBER_CONVERSION_ATTENTIONKINDS_H
