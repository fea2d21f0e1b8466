//===- Calibrate.h - the two modes of ober-calibrate -------------*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_TOOLS_CALIBRATE_H
#define OBER_TOOLS_CALIBRATE_H

#include "ober/Planning/Calibration.h"
#include "ober/Planning/Cluster.h"

#include "mlir/IR/MLIRContext.h"

#include <string>

namespace mlir::ober::calibrate {

struct FromRunsOptions {
  std::string runs;          // the CSV of measured steps
  std::string precision;     // of the models that ran: f16, bf16, f32
  std::string optimizer;     // adam, adamw, sgd
  double dropout = 0;        // Megatron's dropout sites
  int64_t vocabulary = 0;    // before padding
  int64_t vocabularyMultiple = 1; // padded to a multiple of this x tp
  unsigned holdoutEvery = 0; // hold out every k-th run (0: none)
  double fitNorm = planning::kDefaultFitNorm; // see planning::fitLoss
  bool uniformStages = true; // pipelines placed layers uniformly
  std::string predictions;   // write each run with its prediction here
};

/// Fits `cluster`'s device figures to the runs; prints how well the
/// planner predicts them (per model, fitted and held-out runs).
LogicalResult fitToRuns(MLIRContext &context, planning::Cluster &cluster,
                        const FromRunsOptions &options);

struct MeasureOptions {
  /// Seconds to spend at most (the measurement scales its repetitions).
  double budget = 40;
  /// Set false on the ranks of an mpirun job but the first, which
  /// writes the file.
  bool writer = true;
};

/// Measures this machine's cores: GEMM throughput through the kernel
/// library the executables use, memory bandwidth by size, kernel launch
/// time, and collectives through the runtime (threads as devices).
LogicalResult measureThisMachine(MLIRContext &context,
                                 planning::Cluster &cluster,
                                 MeasureOptions &options);

} // namespace mlir::ober::calibrate

#endif // OBER_TOOLS_CALIBRATE_H
