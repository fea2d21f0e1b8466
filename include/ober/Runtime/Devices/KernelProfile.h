//===- KernelProfile.h - GPU time of each launch and library call -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//
//
// `--profile-kernels`: a timing event before and after each kernel launch
// and cuBLASLt call of a thread (a rank's program stream), read back once
// the work has finished, summed by kernel name (KernelTimes.h). Off unless
// a thread turns it on: the events cost a few microseconds a launch.
// Collectives (on NCCL's own stream) are not counted.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_KERNELPROFILE_H
#define OBER_RUNTIME_DEVICES_KERNELPROFILE_H

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/KernelTimes.h"

#include <optional>
#include <string>
#include <vector>

namespace ober::rt::cuda {

class KernelProfile {
public:
  /// The calling thread's profile while it profiles, else null.
  static KernelProfile *current();
  /// Starts (on) or stops profiling on the calling thread.
  static void enable(bool on);

  /// Brackets work queued on `stream`: begin() before it, end() after.
  void begin(CUstream stream);
  void end(const std::string &name, CUstream stream);
  /// end() for a kernel launch, named as it was looked up.
  void end(CUfunction function, CUstream stream);
  /// The times so far, by name (waits for the bracketed work to finish).
  const KernelTimes &times();

private:
  struct Span {
    std::string name;
    Event start, end;
  };
  /// Reads the finished spans into `table` and keeps their events.
  void collect();
  Event take();

  KernelTimes table;
  std::vector<Span> pending;
  std::vector<Event> spare;
  std::optional<Event> opened; // begin()'s event, until end()
};

} // namespace ober::rt::cuda

#endif // OBER_RUNTIME_DEVICES_KERNELPROFILE_H
