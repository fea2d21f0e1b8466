//===- Options.h - a compiled executable's command line ----------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_OPTIONS_H
#define OBER_LIB_RUNTIME_EXECUTABLE_OPTIONS_H

#include "ober/Runtime/LRSchedule.h"
#include "ober/Runtime/Program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ober::rt {

struct Options {
  std::vector<std::string> inputs;
  int64_t steps = 1;
  /// Inference: runs of the model on the same inputs.
  int64_t repeat = 1;
  /// --lr (the peak), --lr-schedule, --warmup-steps, --min-lr and
  /// --decay-steps (default: --steps).
  LRSchedule lr;
  uint64_t initSeed = 0;
  std::string weights;
  std::string saveParams;
  std::string outputDir;
  int threads = 0; // 0: the node's cores shared by its ranks
  double commTimeout = 300;
  /// A data set instead of --input (ober/Runtime/Dataset.h), its shuffle's
  /// seed, and a folder where each rank logs the samples it reads.
  std::string data, dataLog;
  uint64_t dataSeed = 0;
  /// Tracking (rank 0): the folder and the run's name.
  std::string logDir, runName;
  /// Checkpoints: the folder, every how many steps (0: only after the
  /// last), how many to keep (0: all), whether a thread writes them while
  /// training goes on, and whether to resume from the newest complete one.
  std::string checkpointDir;
  int64_t checkpointEvery = 0, keep = 0;
  bool checkpointAsync = false;
  bool resume = false;
  /// Local SGD's outer Nesterov step (DiLoCo's defaults).
  double outerLearningRate = 0.7, outerMomentum = 0.9;
  bool print = false;
  bool timing = false;
  bool profileKernels = false;
  bool help = false;
};

/// Parses `argv` for a program of `kind`; on failure returns false with
/// `error` naming the option.
bool parseOptions(int argc, char **argv, Program::Kind kind, Options &out,
                  std::string &error);

/// The usage text of a program of `kind` (its own options only).
std::string usage(const char *self, const Program &program);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_OPTIONS_H
