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
// Under local SGD the data-parallel replicas' parameters and inner optimizer
// state differ between averages: replica 0's are saved under the global
// names, replica r's under `replica<r>.<name>`, and the outer step's state
// (side state, the same on every replica) under its own names.
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

#include <atomic>
#include <map>
#include <thread>

namespace ober::rt {

/// State the runtime keeps besides the program's arguments (local SGD's
/// anchors and outer momentum): a block of argument `arg`'s shape and cut,
/// the same on every replica, saved as `name`.
struct SideState {
  std::string name;
  size_t arg = 0;
  HostTensor value;
  /// Loading: whether the checkpoint held it (else `value` is untouched).
  bool found = false;
};

/// Saves checkpoints into a folder; every rank holds one and calls it at
/// the same steps.
class CheckpointWriter {
public:
  CheckpointWriter() = default;
  CheckpointWriter(const CheckpointWriter &) = delete;
  CheckpointWriter &operator=(const CheckpointWriter &) = delete;
  /// Waits for a thread still writing; a save never committed is removed.
  ~CheckpointWriter();

  /// Saves the state in `args` and `side` after `steps` steps into `dir`
  /// (keeping the newest `keep` checkpoints, 0: all), with `extra`
  /// strings in the manifest (the data set and the samples consumed). The
  /// state is copied now (a pending save is committed first); with
  /// `async` a thread writes this rank's files while training goes on and
  /// `finish` commits them, else they are written and committed before
  /// it returns. False with `error` when any rank failed (nothing
  /// half-written is left visible).
  bool start(const Program &program, const Placement &where,
             const std::string &dir, int64_t steps, int64_t keep,
             const std::vector<HostTensor> &args,
             const std::vector<SideState> &side,
             const std::map<std::string, std::string> &extra, bool async,
             std::string &error);

  /// Commits the pending save, if any, once every rank has written its
  /// files: with `wait` after waiting for them, else only if they all
  /// have (a collective: every rank calls it at the same steps). False
  /// with `error` when the save failed.
  bool finish(const Placement &where, bool wait, std::string &error);

private:
  const Program *program = nullptr;
  std::string dir, folder; // folder: the pending save's (.tmp), or empty
  int64_t steps = 0, keep = 0, rank = 0;
  std::map<std::string, std::string> extra;
  std::thread writer;
  std::atomic<bool> written{false};
  bool writeOk = true;
  std::string writeError;
};

/// Whether every rank says `ok` (the logical and over the job).
bool allRanks(const Placement &where, bool ok);

/// Makes SIGTERM and SIGUSR1 ask for a clean stop (stopRequested) instead
/// of ending the process.
void stopOnSignals();
bool stopRequested();

/// Loads this rank's blocks of the newest complete checkpoint in `dir`
/// into `args` and the `side` state it holds (a checkpoint without it, or
/// without this replica's own state, is used as well), and its manifest's
/// `extra` strings; every rank calls it. Returns the steps it holds, 0
/// when there is none, -1 with `error` when it cannot be used.
int64_t loadCheckpoint(const Program &program, const Placement &where,
                       const std::string &dir, std::vector<HostTensor> &args,
                       std::vector<SideState> &side,
                       std::map<std::string, std::string> &extra,
                       std::string &error);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_CHECKPOINT_H
