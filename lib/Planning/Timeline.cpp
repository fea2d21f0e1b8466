//===- Timeline.cpp - a pipeline schedule simulated pass by pass ----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Timeline.h"

#include <algorithm>
#include <limits>

using namespace mlir::ober;
using namespace mlir::ober::planning;

Timeline mlir::ober::planning::simulatePipeline(Schedule schedule,
                                                unsigned p, unsigned m,
                                                unsigned chunks,
                                                llvm::ArrayRef<ChunkTimes> times,
                                                bool keepEvents) {
  unsigned v = p > 1 ? std::max(chunks, 1u) : 1;
  unsigned virtualStages = p * v;
  Timeline t;
  t.busy.assign(p, 0);
  t.finish.assign(p, 0);
  t.lastBackwardStart.assign(p, 0);
  if (p == 0 || m == 0)
    return t;
  if (times.size() != virtualStages) { // not this schedule's stages
    t.makespan = std::numeric_limits<double>::infinity();
    return t;
  }
  // The orders, kept from the last call (the search asks for the same
  // schedule and sizes many times in a row).
  struct Orders {
    Schedule schedule;
    unsigned p = 0, m = 0, v = 0;
    std::vector<llvm::SmallVector<PipelinePass>> byDevice;
    size_t passes = 0;
  };
  static thread_local Orders cached;
  if (cached.byDevice.empty() || cached.schedule != schedule ||
      cached.p != p || cached.m != m || cached.v != v) {
    cached = {schedule, p, m, v, {}, 0};
    for (unsigned d = 0; d < p; ++d) {
      cached.byDevice.push_back(pipelineOrder(schedule, p, d, m, v));
      cached.passes += cached.byDevice.back().size();
    }
  }
  const auto &orders = cached.byDevice;
  size_t remaining = cached.passes;
  // When each pass of each virtual stage ends (-1: not yet simulated).
  std::vector<double> forwardEnd(size_t(virtualStages) * m, -1),
      backwardEnd(size_t(virtualStages) * m, -1);
  std::vector<size_t> next(p, 0);
  std::vector<double> free(p, 0);
  if (keepEvents)
    t.events.reserve(remaining);
  // Devices to try: each runs its passes until one waits for a pass of
  // another device, and is tried again when that pass ends.
  std::vector<unsigned> work;
  for (unsigned d = p; d-- > 0;)
    work.push_back(d);
  auto deviceOf = [&](unsigned s) { return s % p; };
  while (!work.empty()) {
    unsigned d = work.back();
    work.pop_back();
    for (; next[d] < orders[d].size(); ++next[d]) {
      PipelinePass pass = orders[d][next[d]];
      unsigned s = pass.chunk * p + d;
      size_t at = size_t(s) * m + pass.microBatch;
      const ChunkTimes &own = times[s];
      double ready = free[d], duration = 0;
      if (pass.kind == PipelinePass::Forward) {
        if (s > 0) {
          double in = forwardEnd[at - m];
          if (in < 0)
            break;
          ready = std::max(ready, in + times[s - 1].sendForward);
        }
        duration = own.forward;
      } else if (pass.kind == PipelinePass::Backward) {
        if (forwardEnd[at] < 0)
          break;
        if (s + 1 < virtualStages) {
          double in = backwardEnd[at + m];
          if (in < 0)
            break;
          ready = std::max(ready, in + times[s + 1].sendBackward);
        }
        duration = own.backward;
      } else {
        if (backwardEnd[at] < 0)
          break;
        duration = own.weight;
      }
      double end = ready + duration;
      if (pass.kind == PipelinePass::Forward) {
        forwardEnd[at] = end;
        if (s + 1 < virtualStages && deviceOf(s + 1) != d)
          work.push_back(deviceOf(s + 1));
      } else if (pass.kind == PipelinePass::Backward) {
        backwardEnd[at] = end;
        if (s > 0 && deviceOf(s - 1) != d)
          work.push_back(deviceOf(s - 1));
      }
      if (pass.kind != PipelinePass::Forward)
        t.lastBackwardStart[d] = ready;
      free[d] = end;
      t.busy[d] += duration;
      t.finish[d] = end;
      if (keepEvents)
        t.events.push_back(
            {d, pass.microBatch, pass.chunk, pass.kind, ready, end});
      --remaining;
    }
  }
  if (remaining) { // not a valid order: no finite time
    t.makespan = std::numeric_limits<double>::infinity();
    return t;
  }
  t.makespan = *std::max_element(t.finish.begin(), t.finish.end());
  return t;
}
