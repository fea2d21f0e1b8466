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
  if (p == 0 || m == 0 || times.size() < virtualStages)
    return t;
  std::vector<llvm::SmallVector<PipelinePass>> orders;
  size_t remaining = 0;
  for (unsigned d = 0; d < p; ++d) {
    orders.push_back(pipelineOrder(schedule, p, d, m, v));
    remaining += orders.back().size();
  }
  // When each pass of each virtual stage ends (-1: not yet simulated).
  std::vector<double> forwardEnd(size_t(virtualStages) * m, -1),
      backwardEnd(size_t(virtualStages) * m, -1);
  std::vector<size_t> next(p, 0);
  std::vector<double> free(p, 0);
  if (keepEvents)
    t.events.reserve(remaining);
  // Each sweep runs, on every device, the passes whose inputs are known;
  // a valid order makes progress in every sweep.
  while (remaining) {
    bool progress = false;
    for (unsigned d = 0; d < p; ++d) {
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
        (pass.kind == PipelinePass::Forward ? forwardEnd : backwardEnd)[at] =
            pass.kind == PipelinePass::Weight ? backwardEnd[at] : end;
        if (pass.kind != PipelinePass::Forward)
          t.lastBackwardStart[d] = ready;
        free[d] = end;
        t.busy[d] += duration;
        t.finish[d] = end;
        if (keepEvents)
          t.events.push_back({d, pass.microBatch, pass.chunk, pass.kind, ready,
                              end});
        --remaining;
        progress = true;
      }
    }
    if (!progress) { // not a valid order: no finite time
      t.makespan = std::numeric_limits<double>::infinity();
      return t;
    }
  }
  t.makespan = *std::max_element(t.finish.begin(), t.finish.end());
  return t;
}
