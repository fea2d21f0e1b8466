//===- Batches.cpp - which part of an input file feeds each step ----------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Batches.h"

#include "ober/Runtime/Program.h"

using namespace ober::rt;

BatchLayout ober::rt::batchLayout(const std::vector<int64_t> &file,
                                  const std::vector<int64_t> &arg) {
  if (file == arg)
    return BatchLayout::Whole;
  if (arg.size() >= 2 && file.size() + 1 == arg.size() && !file.empty() &&
      file.front() == arg[0] * arg[1] &&
      std::vector<int64_t>(file.begin() + 1, file.end()) ==
          std::vector<int64_t>(arg.begin() + 2, arg.end()))
    return BatchLayout::MergedMicroBatches;
  // One batch per step, in either of the forms above.
  if (!file.empty()) {
    BatchLayout each =
        batchLayout(std::vector<int64_t>(file.begin() + 1, file.end()), arg);
    if (each == BatchLayout::Whole || each == BatchLayout::MergedMicroBatches)
      return BatchLayout::PerStep;
  }
  return BatchLayout::Mismatch;
}

int64_t ober::rt::batchOffset(BatchLayout layout,
                              const std::vector<int64_t> &file,
                              const std::vector<int64_t> &arg, int64_t step) {
  if (layout != BatchLayout::PerStep || file.front() == 0)
    return 0;
  return (step % file.front()) * elementCount(arg);
}
