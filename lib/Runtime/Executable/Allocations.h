//===- Allocations.h - bytes the executable holds, counted -----*- C++ -*-===//
//
// Part of Ober-Train's runtime.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_EXECUTABLE_ALLOCATIONS_H
#define OBER_RUNTIME_EXECUTABLE_ALLOCATIONS_H

#include <cstdint>

namespace ober::rt {

/// Whether this build counts allocations (not under sanitizers).
bool allocationsCounted();
/// Bytes the process's allocations hold now, and at most since the last
/// reset (every thread's together).
int64_t liveBytes();
int64_t peakLiveBytes();
void resetPeakLiveBytes();

} // namespace ober::rt

#endif // OBER_RUNTIME_EXECUTABLE_ALLOCATIONS_H
