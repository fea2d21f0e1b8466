//===- Run.h - training and inference with a compiled program ---*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_RUN_H
#define OBER_LIB_RUNTIME_EXECUTABLE_RUN_H

#include "Buffers.h"
#include "Options.h"

#include <string>
#include <vector>

namespace ober::rt {

/// The compiled function (`ober_program_run`).
using Entry = void (*)(void **);

/// Calls `entry` on `args` (the program's arguments, in order) and returns
/// its results; a result in an argument's buffer (written in place, or
/// returned there) shares it.
std::vector<HostTensor> invoke(Entry entry, const Program &program,
                               const std::vector<HostTensor> &args);

/// Trains: parameters from the weights or the seed, zero optimizer state,
/// `options.steps` steps printing `step <i> loss <v>`. Returns the exit
/// code; errors go to stderr.
int train(Entry entry, const Program &program, const Options &options,
          const std::string &self);

/// Runs inference once on `options.inputs`, writing or printing outputs.
int infer(Entry entry, const Program &program, const Options &options,
          const std::string &self);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_RUN_H
