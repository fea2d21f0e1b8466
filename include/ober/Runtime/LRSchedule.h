//===- LRSchedule.h - the learning rate of each step ------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A linear warm-up, then a constant
// rate or a cosine or linear decay to a floor, as PyTorch composes them:
//
//   warm-up (s < W):  LinearLR(start_factor=1/W, end_factor=1,
//                              total_iters=W-1)   lr = peak (s + 1) / W
//   cosine:           CosineAnnealingLR(T_max=D-W, eta_min=min)
//                     lr = min + (peak - min) (1 + cos(pi (s - W) / (D - W))) / 2
//   linear:           LinearLR(start_factor=1, end_factor=min/peak,
//                              total_iters=D-W)
//                     lr = peak - (peak - min) (s - W) / (D - W)
//
// joined by SequentialLR(milestones=[W]); D is the decay's last step
// (after it the rate stays at min). The executables and ober-run use it.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_LRSCHEDULE_H
#define OBER_RUNTIME_LRSCHEDULE_H

#include <cstdint>
#include <string>

namespace ober::rt {

struct LRSchedule {
  enum Kind { Constant, Cosine, Linear } kind = Constant;
  double peak = 1e-3, min = 0;
  int64_t warmup = 0, decaySteps = 0;

  /// The rate of step `step` (from 0).
  double at(int64_t step) const;
  /// An empty string when the schedule is usable, else what is wrong
  /// (naming the option: a NaN, infinite or negative rate, a floor above
  /// the peak, a warm-up longer than the decay).
  std::string check() const;
};

/// "constant", "cosine" or "linear"; false for another name.
bool parseLRScheduleKind(const std::string &name, LRSchedule::Kind &out);
/// The name of `kind`, and all the names, for messages.
const char *lrScheduleName(LRSchedule::Kind kind);
const char *lrScheduleKinds();

} // namespace ober::rt

#endif // OBER_RUNTIME_LRSCHEDULE_H
