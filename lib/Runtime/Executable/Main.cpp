//===- Main.cpp - the main of executables built by ober-compile -----------===//
//
// Part of Ober-Train's runtime (no MLIR). The compiled object provides the
// program (`ober_program_entries`, one function per pipeline stage) and
// its manifest; this reads the manifest, the command line (options of the
// program's kind only), and trains or runs inference: on one device here,
// or on the ranks of the plan's grid (Ranks.h).
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "Ranks.h"

#include "ober/Runtime/LaunchEnv.h"

#include <cstdio>
#include <malloc.h>

extern "C" {
/// Provided by the object ober-compile emits.
extern const char ober_program_manifest[];
extern void (*const ober_program_entries[])(void **);
}

/// Freed blocks stay in the heap (no mmap per large buffer, up to glibc's
/// largest threshold), so that later steps reuse the pages of earlier ones
/// instead of faulting in new ones.
static void keepFreedMemory() {
  constexpr int kLargestMmapThreshold = 32 << 20; // glibc's maximum
  constexpr int kNeverTrim = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kNeverTrim);
}

int main(int argc, char **argv) {
  using namespace ober::rt;
  std::string self = argc ? argv[0] : "train";
  Program program;
  std::string error;
  if (!readProgram(ober_program_manifest, program, error))
    return reportError(self, error, 70);
  Options options;
  if (!parseOptions(argc, argv, program.kind, options, error))
    return reportError(self, error, OBER_RT_EXIT_USAGE);
  if (options.help) {
    std::fputs(usage(self.c_str(), program).c_str(), stdout);
    return 0;
  }
  keepFreedMemory();
  if (!options.checkpointDir.empty())
    stopOnSignals();
  if (program.devices() > 1)
    return trainOnRanks(ober_program_entries, program, options, self);
  if (int code = checkOneRank(program, self))
    return code;
  // Kernels are created on this thread, the one that runs the steps, so
  // that the first step's time is the steps'.
  if (!prepareRank(program, Placement(), options.threads, self))
    return 70;
  return program.kind == Program::Train
             ? train(ober_program_entries[0], program, options, self,
                     Placement())
             : infer(ober_program_entries[0], program, options, self);
}
