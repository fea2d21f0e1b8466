//===- Main.cpp - the main of executables built by ober-compile -----------===//
//
// Part of Ober-Train's runtime (no MLIR). The compiled object provides the
// program (`ober_program_run`) and its manifest; this reads the manifest,
// the command line (options of the program's kind only), sets the threads
// of kernels and generated loops, creates the library kernels the program
// calls, and trains or runs inference.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "ober/Runtime/CPUKernels.h"

#include <cstdio>
#include <malloc.h>

extern "C" {
/// Provided by the object ober-compile emits.
extern const char ober_program_manifest[];
void ober_program_run(void **args);
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

/// Creates the program's library kernels on this thread, the one that runs
/// the steps, so that the first step's time is the steps'.
static bool prepareKernels(const ober::rt::Program &program,
                           const std::string &self) {
  for (const ober::rt::ProgramKernel &k : program.kernels)
    if (ober_rt_cpu_prepare_kernel(k.name.c_str(), k.desc.data(),
                                   static_cast<int64_t>(k.desc.size()))) {
      std::fprintf(stderr,
                   "%s: error: program manifest: kernel '%s' with a "
                   "descriptor of %zu fields is not in this runtime\n",
                   self.c_str(), k.name.c_str(), k.desc.size());
      return false;
    }
  return true;
}

int main(int argc, char **argv) {
  using namespace ober::rt;
  std::string self = argc ? argv[0] : "train";
  Program program;
  std::string error;
  if (!readProgram(ober_program_manifest, program, error)) {
    std::fprintf(stderr, "%s: error: %s\n", self.c_str(), error.c_str());
    return 70;
  }
  Options options;
  if (!parseOptions(argc, argv, program.kind, options, error)) {
    std::fprintf(stderr, "%s: error: %s\n", self.c_str(), error.c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(usage(self.c_str(), program).c_str(), stdout);
    return 0;
  }
  keepFreedMemory();
  ober_rt_cpu_set_threads(options.threads);
  if (!prepareKernels(program, self))
    return 70;
  return program.kind == Program::Train
             ? train(ober_program_run, program, options, self)
             : infer(ober_program_run, program, options, self);
}
