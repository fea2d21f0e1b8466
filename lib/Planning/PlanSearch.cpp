//===- PlanSearch.cpp - the solver ----------------------------------------===//
//
// Part of Ober-Train. Enumerates tensor/pipeline/data degrees, sequence
// parallelism, recomputation, schedule (and model chunks), micro-batch size
// and ZeRO stage; partitions the segment chain into stages with a bottleneck
// search (the least maximum stage time, by bisection over a greedy packing);
// keeps the fastest plan that fits, ties going to the first found.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Plan.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::ober::planning;

namespace {
std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0)
      d.push_back(i);
  return d;
}

/// Starts of `groups` contiguous groups of `cost` minimizing the largest
/// group sum.
std::vector<unsigned> partition(ArrayRef<double> cost, int64_t groups) {
  unsigned n = cost.size();
  auto count = [&](double limit) {
    int64_t used = 1;
    double cur = 0;
    for (double c : cost) {
      if (cur + c > limit && cur > 0) {
        ++used;
        cur = 0;
      }
      cur += c;
    }
    return used;
  };
  double lo = 0, hi = 0;
  for (double c : cost) {
    lo = std::max(lo, c);
    hi += c;
  }
  for (int i = 0; i < 60 && hi - lo > 1e-9 * hi; ++i) {
    double mid = (lo + hi) / 2;
    (count(mid) <= groups ? hi : lo) = mid;
  }
  std::vector<unsigned> starts = {0};
  double cur = 0;
  for (unsigned i = 0; i < n; ++i) {
    bool open = static_cast<int64_t>(starts.size()) < groups && i > 0 &&
                (cur + cost[i] > hi ||
                 n - i == static_cast<unsigned>(groups - starts.size()));
    if (open) {
      starts.push_back(i);
      cur = 0;
    }
    cur += cost[i];
  }
  return starts;
}

/// Whether some partition might fit: the model state and one micro-batch's
/// activations, spread evenly over the stages, must fit.
bool couldFit(const PlanProblem &problem, const PlanEstimate &e) {
  double total = 0;
  for (const StageEstimate &st : e.stages)
    total += st.memory.parameters + st.memory.gradients + st.memory.optimizer +
             st.memory.activations / std::max<int64_t>(st.inFlight, 1);
  return total / e.stages.size() <= problem.memoryLimit;
}

bool better(const PlanEstimate &a, const PlanEstimate &b) {
  return a.stepTime < b.stepTime * (1 - 1e-9);
}
} // namespace

std::vector<int64_t>
mlir::ober::planning::candidateDegrees(const Cluster &cluster, int64_t gpus,
                                       const PlanPins &pins) {
  if (pins.tp)
    return {*pins.tp};
  std::vector<int64_t> out;
  for (int64_t d : divisorsOf(gpus))
    if (d <= cluster.devicesPerNode)
      out.push_back(d);
  return out;
}

FailureOr<SearchResult>
mlir::ober::planning::search(const PlanProblem &problem, const PlanPins &pins,
                             std::string &error) {
  const ModelProfile &m = *problem.profile;
  int64_t gpus = problem.cluster.numDevices();
  int64_t batch = problem.globalBatch;
  unsigned n = m.segments.size();
  auto fail = [&](const std::string &msg) -> FailureOr<SearchResult> {
    error = msg;
    return failure();
  };
  if (pins.tp && gpus % *pins.tp)
    return fail("tp=" + std::to_string(*pins.tp) + " does not divide the " +
                std::to_string(gpus) + " devices");
  if (pins.pp && gpus % *pins.pp)
    return fail("pp=" + std::to_string(*pins.pp) + " does not divide the " +
                std::to_string(gpus) + " devices");
  if (pins.pp && *pins.pp > static_cast<int64_t>(n))
    return fail("pp=" + std::to_string(*pins.pp) + " is more stages than the " +
                std::to_string(n) + " segments the model can be cut into");
  if (pins.tp && pins.pp && pins.dp && *pins.tp * *pins.pp * *pins.dp != gpus)
    return fail("tp*pp*dp = " + std::to_string(*pins.tp * *pins.pp * *pins.dp) +
                " but the cluster has " + std::to_string(gpus) + " devices");
  if (pins.dp && batch % *pins.dp)
    return fail("dp=" + std::to_string(*pins.dp) +
                " does not divide global-batch=" + std::to_string(batch));
  if (pins.microBatch && batch % *pins.microBatch)
    return fail("micro-batch=" + std::to_string(*pins.microBatch) +
                " does not divide global-batch=" + std::to_string(batch));

  SearchResult result;
  std::vector<Recompute> recomputes = {Recompute::None, Recompute::Selective,
                                       Recompute::Full};
  std::vector<Schedule> schedules = {Schedule::OneFOneB, Schedule::ZeroBubble,
                                     Schedule::Interleaved, Schedule::GPipe};
  std::map<std::tuple<int64_t, bool, int, int64_t, int64_t>,
           std::vector<unsigned>>
      partitions;
  for (int64_t tp : m.degrees) {
    if (gpus % tp || (pins.tp && tp != *pins.tp))
      continue;
    for (int64_t pp : divisorsOf(gpus / tp)) {
      if ((pins.pp && pp != *pins.pp) || pp > static_cast<int64_t>(n))
        continue;
      int64_t dp = gpus / (tp * pp);
      if ((pins.dp && dp != *pins.dp) || batch % dp)
        continue;
      for (bool sp : {false, true}) {
        if ((sp && tp == 1) ||
            (pins.sequenceParallel && sp != *pins.sequenceParallel))
          continue;
        for (Recompute rc : recomputes) {
          if (pins.recompute && rc != *pins.recompute)
            continue;
          for (Schedule sched : schedules) {
            if (pins.schedule ? sched != *pins.schedule
                              : pp == 1 && sched != Schedule::OneFOneB)
              continue;
            // Interleaving: 2-8 chunks per device (or the pinned count),
            // each of at least one segment.
            std::vector<int64_t> chunkOptions = {1};
            if (sched == Schedule::Interleaved) {
              chunkOptions.clear();
              int64_t most = pins.chunks ? *pins.chunks : 8;
              for (int64_t v = pins.chunks ? *pins.chunks : 2;
                   v <= most && pp > 1 && pp * v <= static_cast<int64_t>(n);
                   ++v)
                chunkOptions.push_back(v);
            }
            for (int64_t v : chunkOptions) {
              if (pins.chunks && v != *pins.chunks)
                continue;
              PlanConfig c;
              c.tp = tp;
              c.pp = pp;
              c.dp = dp;
              c.sequenceParallel = sp;
              c.recompute = rc;
              c.schedule = sched;
              c.chunks = v;
              // Stage partition by per-micro-batch time (independent of
              // the micro-batch size and ZeRO stage up to latencies).
              auto key = std::make_tuple(tp, sp, static_cast<int>(rc), pp, v);
              auto it = partitions.find(key);
              if (it == partitions.end()) {
                PlanConfig unit = c;
                unit.microBatch = 1;
                std::vector<double> cost;
                for (unsigned i = 0; i < n; ++i)
                  cost.push_back(segmentSeconds(problem, unit, i));
                it = partitions.emplace(key, partition(cost, pp * v)).first;
              }
              for (int64_t mb : divisorsOf(batch / dp)) {
                if (pins.microBatch && mb != *pins.microBatch)
                  continue;
                int64_t micro = batch / (dp * mb);
                if (sched == Schedule::Interleaved && micro % pp)
                  continue;
                for (int zero = 0; zero <= 3; ++zero) {
                  if ((pins.zeroStage && zero != *pins.zeroStage) ||
                      (!pins.zeroStage && dp == 1 && zero > 0))
                    continue;
                  c.microBatch = mb;
                  c.numMicroBatches = micro;
                  c.zeroStage = zero;
                  PlanEstimate e = evaluate(problem, c, it->second);
                  ++result.evaluated;
                  // A time-balanced partition that overflows a stage:
                  // balance under the memory limit instead (only worth it
                  // when the time-balanced one, a bound on any partition's
                  // time, would beat the best so far).
                  if (!e.fits && pp > 1 && v == 1 &&
                      (!result.found || better(e, result.best)) &&
                      couldFit(problem, e)) {
                    std::vector<unsigned> starts =
                        memoryAwarePartition(problem, c);
                    if (!starts.empty() && starts != it->second) {
                      PlanEstimate f = evaluate(problem, c, starts);
                      ++result.evaluated;
                      if (f.fits || f.peakMemory < e.peakMemory)
                        e = std::move(f);
                    }
                  }
                  bool leaner = result.leanest.stages.empty() ||
                                e.peakMemory < result.leanest.peakMemory;
                  if (e.fits && (!result.found || better(e, result.best))) {
                    result.found = true;
                    if (leaner)
                      result.leanest = e;
                    result.best = std::move(e);
                  } else if (leaner) {
                    result.leanest = std::move(e);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (result.evaluated == 0)
    return fail("no plan satisfies the pinned choices for " +
                std::to_string(gpus) + " devices and global-batch=" +
                std::to_string(batch) +
                " (tp must divide the devices and be at most the devices per "
                "node unless pinned, dp must divide the global batch, "
                "interleaving needs micro-batches divisible by pp)");
  return result;
}
