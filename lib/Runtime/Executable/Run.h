//===- Run.h - training and inference with a compiled program ---*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_RUN_H
#define OBER_LIB_RUNTIME_EXECUTABLE_RUN_H

#include "Options.h"
#include "Target.h"

#include "ober/Runtime/Comm.h"

#include <string>
#include <vector>

namespace ober::rt {


/// Where the rank running a program sits on its grid.
struct Placement {
  Grid grid{{1}};
  int64_t rank = 0, stage = 0;
  std::vector<int64_t> coords{0};
  /// The rank's collectives (null with one device) and the index of the
  /// group of every rank among its groups.
  Channel *channel = nullptr;
  /// The channel of generated code's collectives where its buffers are
  /// not the host's (CUDA: NCCL); null: `channel`.
  Channel *programChannel = nullptr;
  int64_t worldGroup = 0;
  /// The group of the data-parallel replicas under local SGD (-1: none).
  int64_t replicaGroup = -1;
  /// Ranks that are threads of this process (they share its memory).
  int64_t ranksInProcess = 1;

  /// The placement of `rank` on `program`'s grid.
  static Placement of(const Program &program, int64_t rank);
  /// Every axis of the grid (the world group's).
  std::vector<int64_t> allAxes() const;
  /// A collective of `kind` on `shape` elements of `dtype` over every rank.
  CollectiveDesc overWorld(int64_t kind, DType dtype,
                           std::vector<int64_t> shape) const;
};

/// Prints "<self>: error: <message>" to stderr; returns `code`.
int reportError(const std::string &self, const std::string &message,
                int code = 1);

/// Whether `rank` holds a block of a value cut by `split` that no rank
/// before it holds: at the value's `stage` (-1: every stage), at 0 on the
/// axes it is not split over.
bool ownsBlock(const Program &program, const Placement &where, int64_t rank,
               const Split &split, int64_t stage);
/// The stage that computes argument `arg`'s new value (-1: every stage, or
/// none).
int64_t ownerStage(const Program &program, size_t arg);

/// Trains as the rank at `where`: parameters from the weights or the seed
/// (this rank's blocks), zero optimizer state, `options.steps` steps; rank
/// 0 prints `step <i> loss <v>` and writes `--save-params` (gathered).
/// Returns the exit code; errors go to stderr.
int train(Entry entry, const Program &program, const Options &options,
          const std::string &self, const Placement &where);

/// Runs inference once on `options.inputs`, writing or printing outputs.
int infer(Entry entry, const Program &program, const Options &options,
          const std::string &self);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_RUN_H
