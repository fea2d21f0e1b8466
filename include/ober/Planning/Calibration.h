//===- Calibration.h - fit a device's figures to measured steps ---*- C++ -*-===//
//
// Part of Ober-Train. `ober-calibrate --from-runs` reads measured training
// steps, prices each with the planner, and fits the device figures that
// describe how the framework that ran them uses the hardware (GEMM
// throughput relative to the table, kernel launch time and its overlap
// with the device, a fixed cost per kernel), one value each for all runs:
// no per-run constants. Runs can be held out of the fit to check it.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_CALIBRATION_H
#define OBER_PLANNING_CALIBRATION_H

#include "ober/Planning/Plan.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ober::planning {

/// One measured training step of a GPT, as the columns of vTrain's
/// ground truth name it: `# GPUs, global batch, micro batch, hidden size,
/// attention heads, # layers, sequence length, tensor parallelism, data
/// parallelism, pipeline parallelism, iteration time (ms)`.
struct MeasuredRun {
  int64_t gpus = 0, globalBatch = 0, microBatch = 0, hidden = 0, heads = 0,
          layers = 0, sequence = 0, tp = 0, dp = 0, pp = 0;
  double seconds = 0;
  /// The line of the file it came from.
  unsigned line = 0;
};

/// The column names readRuns looks for, in the order above.
const std::vector<std::string> &runColumns();

/// Reads runs from CSV text (a header line naming the columns, in any
/// order; other columns are ignored). `error` names the file, line and
/// column of the first problem.
std::optional<std::vector<MeasuredRun>>
readRuns(llvm::StringRef text, llvm::StringRef fileName, std::string &error);

/// One run priced by the planner: its problem (shared by runs of one model
/// on one number of devices), configuration and stage partition.
struct FitCase {
  std::shared_ptr<PlanProblem> problem;
  PlanConfig config;
  std::vector<unsigned> starts;
  const MeasuredRun *run = nullptr;
  bool heldOut = false;
  double predicted = 0;
};

/// A device figure the fit sets.
struct FitParameter {
  std::string name; // the cluster JSON key
  double value = 0, lo = 0, hi = 0;
};

/// The norm the fit minimises over the relative errors of the cases not
/// held out: (mean |error|^p)^(1/p). p = 1 is the mean absolute error,
/// which a few configurations far off do not move; larger p weighs the
/// worst errors more (a planner picks among configurations, and one far
/// off picks the wrong one).
constexpr double kDefaultFitNorm = 4;
double fitLoss(const std::vector<FitCase> &cases, double norm);

/// Fits the device figures of `cluster` (the one the cases' problems were
/// built with) to the cases not held out, minimising fitLoss with `norm`
/// by coordinate search. Writes the fitted figures into `cluster` and
/// every case's problem, and each case's prediction. Progress goes to
/// `log` when given.
std::vector<FitParameter> fitDevice(Cluster &cluster,
                                    std::vector<FitCase> &cases,
                                    double norm = kDefaultFitNorm,
                                    llvm::raw_ostream *log = nullptr);

/// Prices every case with its problem's current cluster.
void predictCases(std::vector<FitCase> &cases);

/// Mean and largest absolute relative error of the cases (held out or
/// not, as `heldOut` asks; all with nullopt).
struct FitError {
  double mean = 0, max = 0;
  size_t count = 0;
};
FitError fitError(const std::vector<FitCase> &cases,
                  std::optional<bool> heldOut = std::nullopt);

/// Spearman's rank correlation of predicted and measured step times.
double rankCorrelation(const std::vector<double> &a,
                       const std::vector<double> &b);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_CALIBRATION_H
