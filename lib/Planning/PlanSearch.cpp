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

} // namespace

std::vector<unsigned> mlir::ober::planning::uniformStarts(unsigned segments,
                                                          int64_t groups) {
  std::vector<unsigned> starts = {0};
  if (groups < 2 || segments < 2)
    return starts;
  int64_t middle = static_cast<int64_t>(segments) - 2;
  // Stage j > 0 starts after the first segment and j shares of the middle,
  // the first middle % groups stages one more each.
  for (int64_t j = 1; j < groups; ++j)
    starts.push_back(static_cast<unsigned>(1 + j * (middle / groups) +
                                           std::min(j, middle % groups)));
  return starts;
}

namespace {
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

namespace {
/// Calls `visit` with every plan configuration `pins` allow for `problem`
/// (tensor-parallel degrees from `degrees`): the discrete choices, before
/// stages are partitioned. `visit` returns false to stop.
void forEachConfig(const PlanProblem &problem, const PlanPins &pins,
                   ArrayRef<int64_t> degrees,
                   function_ref<bool(const PlanConfig &)> visit) {
  int64_t gpus = problem.cluster.numDevices();
  int64_t batch = problem.globalBatch;
  int64_t n = problem.profile->segments.size();
  const std::vector<Recompute> recomputes = {
      Recompute::None, Recompute::Selective, Recompute::Full};
  const std::vector<Schedule> schedules = {
      Schedule::OneFOneB, Schedule::ZeroBubble, Schedule::Interleaved,
      Schedule::GPipe};
  PlanConfig c;
  for (int64_t tp : degrees) {
    if (gpus % tp || (pins.tp && tp != *pins.tp) ||
        !problem.profile->splitsAt(tp))
      continue;
    c.tp = tp;
    for (int64_t pp : divisorsOf(gpus / tp)) {
      c.pp = pp;
      c.dp = gpus / (tp * pp);
      if ((pins.pp && pp != *pins.pp) || pp > n ||
          (pins.dp && c.dp != *pins.dp) || batch % c.dp)
        continue;
      for (bool sp : {false, true}) {
        c.sequenceParallel = sp;
        if ((sp && tp == 1) ||
            (pins.sequenceParallel && sp != *pins.sequenceParallel))
          continue;
        for (Recompute rc : recomputes) {
          c.recompute = rc;
          if (pins.recompute && rc != *pins.recompute)
            continue;
          for (Schedule sched : schedules) {
            c.schedule = sched;
            if (pins.schedule ? sched != *pins.schedule
                              : pp == 1 && sched != Schedule::OneFOneB)
              continue;
            // Interleaving: 2-8 chunks per device (or the pinned count),
            // each of at least one segment.
            int64_t least = 1, most = 1;
            if (sched == Schedule::Interleaved) {
              least = std::max<int64_t>(2, pins.chunks.value_or(2));
              most = std::min<int64_t>(pins.chunks ? *pins.chunks : 8,
                                       pp > 1 ? n / pp : 0);
            }
            for (int64_t v = least; v <= most; ++v) {
              c.chunks = v;
              if (pins.chunks && v != *pins.chunks)
                continue;
              for (int64_t mb : divisorsOf(batch / c.dp)) {
                c.microBatch = mb;
                c.numMicroBatches = batch / (c.dp * mb);
                if ((pins.microBatch && mb != *pins.microBatch) ||
                    (sched == Schedule::Interleaved &&
                     c.numMicroBatches % pp))
                  continue;
                c.localSteps = pins.localSteps.value_or(1);
                // Full recomputation's granularity and how many groups
                // of a stage it rebuilds: pinned, or the finest and the
                // fewest that fit (evaluate chooses); recompute=full pinned
                // alone rebuilds every group.
                c.recomputeEvery = rc == Recompute::Full
                                       ? pins.recomputeEvery.value_or(0)
                                       : 1;
                c.recomputeGroups =
                    rc == Recompute::Full
                        ? pins.recomputeGroups.value_or(pins.recompute ? 0 : -1)
                        : 0;
                for (int zero = 0; zero <= 3; ++zero) {
                  c.zeroStage = zero;
                  if ((pins.zeroStage && zero != *pins.zeroStage) ||
                      (!pins.zeroStage && c.dp == 1 && zero > 0) ||
                      (c.localSteps > 1 && (zero > 0 || c.dp < 2)))
                    continue;
                  if (!visit(c))
                    return;
                }
              }
            }
          }
        }
      }
    }
  }
}

/// Pins that contradict each other, the cluster or the model, each named
/// with why it cannot hold.
LogicalResult checkPins(const PlanProblem &problem, const PlanPins &pins,
                        std::string &error) {
  int64_t gpus = problem.cluster.numDevices();
  int64_t batch = problem.globalBatch;
  int64_t n = problem.profile->segments.size();
  auto str = [](int64_t v) { return std::to_string(v); };
  auto fail = [&](const std::string &msg) {
    error = msg;
    return failure();
  };
  if (pins.uniformStages && pins.pp) {
    int64_t groups = *pins.pp * pins.chunks.value_or(1);
    if (groups > 1 && n - 2 < groups)
      return fail("partition=uniform: " + str(n - 2) +
                  " segments between the first and the last cannot give " +
                  str(groups) + " stages one each");
  }
  if (pins.recomputeGroups && pins.recompute != Recompute::Full)
    return fail("recompute-groups=" + str(*pins.recomputeGroups) +
                " needs recompute=full");
  if (pins.recomputeEvery && pins.recompute != Recompute::Full)
    return fail("recompute-every=" + str(*pins.recomputeEvery) +
                " needs recompute=full");
  if (pins.tp && gpus % *pins.tp)
    return fail("tp=" + str(*pins.tp) + " does not divide the " + str(gpus) +
                " devices");
  if (pins.tp && !problem.profile->splitsAt(*pins.tp))
    return fail("tp=" + str(*pins.tp) +
                " splits nothing in this model: no matrix product, attention "
                "head or embedding of it divides by " + str(*pins.tp) +
                ", so each device would run the whole step (pin a tp that "
                "divides its heads or hidden sizes, or leave tp free)");
  if (pins.pp && gpus % *pins.pp)
    return fail("pp=" + str(*pins.pp) + " does not divide the " + str(gpus) +
                " devices");
  if (pins.pp && *pins.pp > n)
    return fail("pp=" + str(*pins.pp) + " is more stages than the " + str(n) +
                " segments the model can be cut into");
  if (pins.tp && pins.pp && pins.dp && *pins.tp * *pins.pp * *pins.dp != gpus)
    return fail("tp*pp*dp = " + str(*pins.tp * *pins.pp * *pins.dp) +
                " but the cluster has " + str(gpus) + " devices");
  if (pins.dp && batch % *pins.dp)
    return fail("dp=" + str(*pins.dp) +
                " does not divide global-batch=" + str(batch));
  if (pins.microBatch && batch % *pins.microBatch)
    return fail("micro-batch=" + str(*pins.microBatch) +
                " does not divide global-batch=" + str(batch));
  if (pins.microBatch && pins.dp && (batch / *pins.dp) % *pins.microBatch)
    return fail("micro-batch=" + str(*pins.microBatch) +
                " does not divide the " + str(batch / *pins.dp) +
                " samples of each of the dp=" + str(*pins.dp) + " replicas");
  if (pins.sequenceParallel.value_or(false) && pins.tp && *pins.tp == 1)
    return fail("sequence-parallel=1 needs tp >= 2 (tp=1 is pinned)");
  if (pins.localSteps && *pins.localSteps > 1) {
    if (pins.zeroStage && *pins.zeroStage > 0)
      return fail("local-steps=" + str(*pins.localSteps) +
                  " needs zero=0: "
                  "each replica keeps its own optimizer state (zero=" +
                  str(*pins.zeroStage) + " is pinned)");
    if (pins.dp && *pins.dp < 2)
      return fail("local-steps=" + str(*pins.localSteps) +
                  " needs dp >= 2 (dp=1 is pinned)");
    if (gpus < 2)
      return fail("local-steps=" + str(*pins.localSteps) +
                  " needs data-parallel replicas, and the cluster has one "
                  "device");
  }
  if (pins.schedule != Schedule::Interleaved)
    return success();
  if (pins.pp && *pins.pp == 1)
    return fail("schedule=interleaved-1f1b needs pp >= 2 (pp=1 is pinned)");
  int64_t chunks = pins.chunks.value_or(2), stages = pins.pp.value_or(2);
  if (stages * chunks > n)
    return fail("schedule=interleaved-1f1b with " + str(chunks) +
                " chunks on each of " + str(stages) +
                " stages needs as many segments, but the model can be cut "
                "into " + str(n) +
                (pins.chunks ? " (pin fewer chunks or stages)"
                             : " (at least 2 chunks a stage: pin fewer "
                               "stages)"));
  if (pins.pp && pins.dp && pins.microBatch &&
      (batch / (*pins.dp * *pins.microBatch)) % *pins.pp)
    return fail("schedule=interleaved-1f1b needs the micro-batches of each "
                "replica (" + str(batch / (*pins.dp * *pins.microBatch)) +
                ") to be a multiple of pp=" + str(*pins.pp));
  return success();
}

/// Why no configuration satisfies `pins`: each pin that, left free, would
/// let some configuration through, named with its value.
std::string explainPins(const PlanProblem &problem, const PlanPins &pins) {
  int64_t gpus = problem.cluster.numDevices();
  auto admits = [&](const PlanPins &p) {
    bool any = false;
    forEachConfig(problem, p, candidateDegrees(problem.cluster, gpus, p),
                  [&](const PlanConfig &) { return any = true, false; });
    return any;
  };
  auto str = [](int64_t v) { return std::to_string(v); };
  std::vector<std::pair<std::string, PlanPins>> freed;
  auto free = [&](const std::string &name, auto field) {
    PlanPins p = pins;
    p.*field = std::nullopt;
    freed.push_back({name, p});
  };
  if (pins.tp) free("tp=" + str(*pins.tp), &PlanPins::tp);
  if (pins.pp) free("pp=" + str(*pins.pp), &PlanPins::pp);
  if (pins.dp) free("dp=" + str(*pins.dp), &PlanPins::dp);
  if (pins.microBatch)
    free("micro-batch=" + str(*pins.microBatch), &PlanPins::microBatch);
  if (pins.chunks) free("chunks=" + str(*pins.chunks), &PlanPins::chunks);
  if (pins.schedule)
    free("schedule=" + stringifySchedule(*pins.schedule).str(), &PlanPins::schedule);
  if (pins.recompute)
    free("recompute=" + stringifyRecompute(*pins.recompute).str(),
         &PlanPins::recompute);
  if (pins.sequenceParallel)
    free("sequence-parallel=" + str(*pins.sequenceParallel),
         &PlanPins::sequenceParallel);
  if (pins.zeroStage)
    free("zero=" + str(*pins.zeroStage), &PlanPins::zeroStage);
  std::string blame;
  for (const auto &[name, p] : freed)
    if (admits(p))
      blame += (blame.empty() ? "" : ", ") + name;
  if (freed.empty()) {
    // Nothing pinned: the device count is not a product the model allows.
    int64_t tp = 1;
    for (int64_t d : candidateDegrees(problem.cluster, gpus, pins))
      if (problem.profile->splitsAt(d))
        tp = std::max(tp, d);
    int64_t n = problem.profile->segments.size();
    return "no plan uses " + str(gpus) + " devices: a plan's tp x dp x pp "
           "must make them, with tp a divisor of them that splits something "
           "(at most " + str(tp) + " here), dp a divisor of global-batch=" +
           str(problem.globalBatch) + " and pp at most the " + str(n) +
           " segments the model can be cut into";
  }
  std::string msg = "no plan satisfies the pinned choices for " + str(gpus) +
                    " devices and global-batch=" + str(problem.globalBatch);
  if (!blame.empty())
    msg += "; plans exist with any one of these left free: " + blame;
  return msg + " (tp must divide the devices and be at most the devices per "
               "node unless pinned, dp must divide the global batch, "
               "sequence parallelism needs tp >= 2, interleaving needs pp >= 2, "
               "pp x chunks segments and micro-batches divisible by pp)";
}
} // namespace

FailureOr<SearchResult>
mlir::ober::planning::search(const PlanProblem &problem, const PlanPins &pins,
                             std::string &error) {
  const ModelProfile &m = *problem.profile;
  unsigned n = m.segments.size();
  if (failed(checkPins(problem, pins, error)))
    return failure();

  SearchResult result;
  std::map<std::tuple<int64_t, bool, int, int64_t, int64_t>,
           std::vector<unsigned>>
      partitions;
  forEachConfig(problem, pins, m.degrees, [&](const PlanConfig &c) {
    // Stage partition by per-micro-batch time (independent of the
    // micro-batch size and ZeRO stage up to latencies).
    auto key = std::make_tuple(c.tp, c.sequenceParallel,
                               static_cast<int>(c.recompute), c.pp, c.chunks);
    auto it = partitions.find(key);
    if (it == partitions.end() && pins.uniformStages) {
      if (c.pp * c.chunks > 1 && static_cast<int64_t>(n) - 2 < c.pp * c.chunks)
        return true; // too few segments for this many stages
      it = partitions.emplace(key, uniformStarts(n, c.pp * c.chunks)).first;
    }
    if (it == partitions.end()) {
      PlanConfig unit = c;
      unit.microBatch = 1;
      std::vector<double> cost;
      for (unsigned i = 0; i < n; ++i)
        cost.push_back(segmentSeconds(problem, unit, i));
      it = partitions.emplace(key, partition(cost, c.pp * c.chunks)).first;
    }
    // Only a plan that could join the ranked ones needs its timeline.
    double worth = result.ranked.size() == kRankedPlans
                       ? result.ranked.back().stepTime
                       : HUGE_VAL;
    PlanEstimate e = evaluate(problem, c, it->second, worth);
    ++result.evaluated;
    // A time-balanced partition that overflows a stage: balance under the
    // memory limit instead (only worth it when the time-balanced one, a
    // bound on any partition's time, would beat the best so far).
    if (!e.fits && c.pp > 1 && c.chunks == 1 && !pins.uniformStages &&
        (!result.found || better(e, result.best)) && couldFit(problem, e)) {
      std::vector<unsigned> starts = memoryAwarePartition(problem, c);
      if (!starts.empty() && starts != it->second) {
        PlanEstimate f = evaluate(problem, c, starts, worth);
        ++result.evaluated;
        if (f.fits || f.peakMemory < e.peakMemory)
          e = std::move(f);
      }
    }
    bool leaner = result.leanest.stages.empty() ||
                  e.peakMemory < result.leanest.peakMemory;
    if (e.fits && e.simulated) {
      // Ties keep the first found, as for `best`.
      auto at = llvm::find_if(result.ranked, [&](const PlanEstimate &r) {
        return better(e, r);
      });
      if (at - result.ranked.begin() < static_cast<long>(kRankedPlans)) {
        result.ranked.insert(at, e);
        if (result.ranked.size() > kRankedPlans)
          result.ranked.pop_back();
      }
    }
    if (e.fits && e.simulated && (!result.found || better(e, result.best))) {
      result.found = true;
      if (leaner)
        result.leanest = e;
      result.best = std::move(e);
    } else if (leaner) {
      result.leanest = std::move(e);
    }
    return true;
  });
  if (result.evaluated == 0) {
    error = explainPins(problem, pins);
    return failure();
  }
  // The leanest plan's time, as for any other (it was kept by its memory).
  if (!result.leanest.simulated) {
    PlanEstimate &lean = result.leanest;
    PlanEstimate full = evaluate(problem, lean.config, lean.starts);
    full.simulated = true;
    if (!full.fits) {
      // evaluate() bounds plans that do not fit: simulate this one anyway.
      PlanProblem roomy = problem;
      roomy.memoryLimit = HUGE_VAL;
      full = evaluate(roomy, lean.config, lean.starts);
      full.fits = false;
    }
    lean = std::move(full);
  }
  return result;
}
