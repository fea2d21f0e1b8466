//===- LRSchedule.cpp - the learning rate of each step --------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/LRSchedule.h"

#include <cmath>

using namespace ober::rt;

double LRSchedule::at(int64_t step) const {
  if (step < warmup)
    return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  if (kind == Constant)
    return peak;
  int64_t span = decaySteps - warmup;
  if (span <= 0 || step - warmup >= span)
    return min;
  double t = static_cast<double>(step - warmup) / static_cast<double>(span);
  if (kind == Cosine)
    return min + (peak - min) * (1 + std::cos(M_PI * t)) / 2;
  return peak - (peak - min) * t;
}

std::string LRSchedule::check() const {
  auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(peak))
    return "--lr must be a finite non-negative number, got " +
           std::to_string(peak);
  if (bad(min))
    return "--min-lr must be a finite non-negative number, got " +
           std::to_string(min);
  if (min > peak)
    return "--min-lr (" + std::to_string(min) + ") is above --lr (" +
           std::to_string(peak) + ")";
  if (warmup < 0)
    return "--warmup-steps must not be negative";
  if (kind != Constant && warmup >= decaySteps)
    return "--warmup-steps (" + std::to_string(warmup) +
           ") leaves no step to decay over (" + std::to_string(decaySteps) +
           " steps)";
  return "";
}

namespace {
/// Each kind's name, by its value.
const char *const kKindNames[] = {"constant", "cosine", "linear"};
} // namespace

bool ober::rt::parseLRScheduleKind(const std::string &name,
                                   LRSchedule::Kind &out) {
  for (int k = LRSchedule::Constant; k <= LRSchedule::Linear; ++k)
    if (name == kKindNames[k]) {
      out = static_cast<LRSchedule::Kind>(k);
      return true;
    }
  return false;
}

const char *ober::rt::lrScheduleName(LRSchedule::Kind kind) {
  return kKindNames[kind];
}

const char *ober::rt::lrScheduleKinds() { return "constant, cosine, linear"; }
