//===- Checkpoint.h - training state saved and restored ---------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A checkpoint is a folder
// `step_<N>` (N steps done, zero-padded) holding, per rank, safetensors
// files of the blocks of parameters and optimizer state it holds (each by
// its global name, optimizer state as `optim.<name>`, the block's offsets
// in `__metadata__["DCP_SHARDING_INFO"]` as PyTorch's distributed
// checkpoint reader expects), and `manifest.json`: the steps, the global
// type of each tensor, and every file with its size, hash and shards.
//
// Saving is atomic: the ranks write into `step_<N>.tmp`, sync and agree;
// rank 0 writes the manifest, renames the folder and syncs its parent,
// then points `latest` at it. Loading scans the folder for complete
// checkpoints, newest first, and takes the first every rank can read
// (sizes and hashes match); each rank reads only the shards that overlap
// the blocks its plan needs, whatever plan wrote them.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_CHECKPOINT_H
#define OBER_LIB_RUNTIME_EXECUTABLE_CHECKPOINT_H

#include "Run.h"

#include <map>

namespace ober::rt {

/// Saves the state in `args` after `steps` steps into `dir` (keeping the
/// newest `keep` checkpoints, 0: all), with `extra` strings in the
/// manifest (the data set and the samples consumed); every rank calls it. False with
/// `error` when any rank failed (nothing half-written is left visible).
bool saveCheckpoint(const Program &program, const Placement &where,
                    const std::string &dir, int64_t steps, int64_t keep,
                    const std::vector<HostTensor> &args,
                    const std::map<std::string, std::string> &extra,
                    std::string &error);

/// Whether every rank says `ok` (the logical and over the job).
bool allRanks(const Placement &where, bool ok);

/// Makes SIGTERM and SIGUSR1 ask for a clean stop (stopRequested) instead
/// of ending the process.
void stopOnSignals();
bool stopRequested();

/// Loads this rank's blocks of the newest complete checkpoint in `dir`
/// into `args`, and its manifest's `extra` strings; every rank calls it.
/// Returns the steps it holds, 0 when
/// there is none, -1 with `error` when it cannot be used.
int64_t loadCheckpoint(const Program &program, const Placement &where,
                       const std::string &dir, std::vector<HostTensor> &args,
                       std::map<std::string, std::string> &extra,
                       std::string &error);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_CHECKPOINT_H
