//===- MeasureCPU.cpp - ober-calibrate on this machine --------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ober;

LogicalResult
mlir::ober::calibrate::measureThisMachine(planning::Cluster &cluster,
                                          const MeasureOptions &options) {
  llvm::errs() << "error: measuring is not built yet\n";
  return failure();
}
