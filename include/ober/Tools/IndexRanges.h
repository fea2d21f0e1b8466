//===- IndexRanges.h - the values integer inputs may hold -------*- C++ -*-===//
//
// Part of Ober-Train. Generated code reads indices unchecked (an embedding
// row or class outside the table clamps, or reads another row), where
// PyTorch and the reference interpreter stop with an error. The compiler
// finds which inputs a model reads as indices, and their bounds, for the
// executable to check each batch (rt::IndexRange).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_INDEXRANGES_H
#define OBER_TOOLS_INDEXRANGES_H

#include "ober/Runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace mlir::ober {

/// The values argument `v` (an integer tensor) may hold where the ops that
/// read it as indices (through calls and ops that carry every element
/// unchanged: reshapes, transposes, broadcasts, concatenations, widening
/// integer casts; not slices, whose readers say nothing of the rest)
/// allow: class targets of a cross-entropy, rows of an embedding,
/// positions of a gather. nullopt when no such op reads it.
std::optional<::ober::rt::IndexRange> indexRangeOf(Value v);

/// Sets `program`'s arguments' index ranges: an inference function's
/// inputs are `func`'s, a training step's batch inputs its loss
/// function's data arguments in order (global shapes, whatever the plan
/// split).
void describeIndexRanges(func::FuncOp func, bool inference,
                         ::ober::rt::Program &program);

} // namespace mlir::ober

#endif // OBER_TOOLS_INDEXRANGES_H
