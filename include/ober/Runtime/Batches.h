//===- Batches.h - which part of an input file feeds each step --*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A training input file holds the
// batch argument's shape (the same batch every step), that shape with its
// two leading dimensions (micro-batches and their samples) merged, or
// either of them with one more leading dimension holding a batch per step
// (step `i` reads batch `i mod steps`). The interpreter's training loop and training executables
// both read inputs by this rule.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_BATCHES_H
#define OBER_RUNTIME_BATCHES_H

#include <cstdint>
#include <vector>

namespace ober::rt {

enum class BatchLayout { Whole, MergedMicroBatches, PerStep, Mismatch };

/// How an array of shape `file` feeds an argument of shape `arg`.
BatchLayout batchLayout(const std::vector<int64_t> &file,
                        const std::vector<int64_t> &arg);

/// The first element (row-major) of step `step`'s batch in the file; the
/// batch is the argument's element count from there.
int64_t batchOffset(BatchLayout layout, const std::vector<int64_t> &file,
                    const std::vector<int64_t> &arg, int64_t step);

} // namespace ober::rt

#endif // OBER_RUNTIME_BATCHES_H
