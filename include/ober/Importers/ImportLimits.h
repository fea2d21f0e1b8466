//===- ImportLimits.h - bounds both importers enforce -----------*- C++ -*-===//
//
// Part of Ober-Train. The ONNX and TorchScript importers resolve control
// flow at import time by unrolling it; these bound what a model (or a
// malformed file) can make them build.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_IMPORTERS_IMPORTLIMITS_H
#define OBER_IMPORTERS_IMPORTLIMITS_H

#include <cstdint>

namespace mlir::ober {

/// Iterations one unrolled loop (ONNX Loop, Scan, SequenceMap; a scripted
/// module's for or while) may have.
constexpr int64_t kMaxUnrolledIterations = 4096;

/// Nodes one import may convert, counting each unrolled iteration's body
/// again (nested loops multiply).
constexpr int64_t kMaxImportedNodes = int64_t(1) << 18;

} // namespace mlir::ober

#endif // OBER_IMPORTERS_IMPORTLIMITS_H
