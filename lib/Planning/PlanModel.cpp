//===- PlanModel.cpp - step time and memory of one plan -------------------===//
//
// Part of Ober-Train. The problem model: given a profile and a plan, the
// time of one training step (pipeline of micro-batches, tensor-parallel
// collectives inside each stage, the data-parallel reduction overlapped with
// the last backward pass, the optimizer update) and the bytes each device
// holds (model state by ZeRO stage, saved activations times the micro-batches
// in flight under the schedule, and the working set of one segment).
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/MemoryModel.h"
#include "ober/Planning/Plan.h"
#include "ober/Planning/Timeline.h"

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>

using namespace mlir;
using namespace mlir::ober::planning;

std::optional<Schedule> mlir::ober::planning::parseSchedule(StringRef s) {
  if (std::optional<Schedule> k = symbolizeSchedule(s))
    return k;
  if (s == "interleaved")
    return Schedule::Interleaved;
  if (s == "zb" || s == "zb-h1")
    return Schedule::ZeroBubble;
  return std::nullopt;
}

namespace {
/// Per-micro-batch figures of one segment under a plan.
struct SegmentCost {
  double forward = 0, backward = 0, recompute = 0, tpComm = 0;
  double saved = 0, working = 0, largest = 0, scores = 0, parameters = 0;
  /// Kernels the forward pass and the backward pass (with recomputation)
  /// launch, and the part of `backward` that makes weight gradients.
  double forwardKernels = 0, backwardKernels = 0, weight = 0;
  /// The part of `tpComm` full recomputation does not repeat when the
  /// segment ends a stage (TPCollective::recomputedAtStageEnd).
  double notAtStageEnd = 0;
  /// Of that, what moves the segment's input (not repeated at the start
  /// of a stage, where the input is the received value recomputation keeps).
  double notAtStageStart = 0;
  /// The part of `recompute`, and of its kernels, that full recomputation
  /// does not run again where it keeps the segment's output: what the
  /// backward pass does not read (TPProfile::neededMatmul).
  double notRebuilt = 0, notRebuiltKernels = 0;

  /// The collectives and the recomputation of a micro-batch where full
  /// recomputation keeps (or not) the segment's input and its output.
  double comm(bool keptInput, bool keptOutput) const {
    return tpComm - (keptOutput ? notAtStageEnd : 0) -
           (keptInput ? notAtStageStart : 0);
  }
  double rebuilt(bool keptOutput) const {
    return recompute - (keptOutput ? notRebuilt : 0);
  }
  /// Both passes of a micro-batch with them; where a segment sits in its
  /// recomputation group is not known (stage balancing, --ober-plan-explain),
  /// as if every segment kept its input and output (recompute-every=1).
  double seconds(const PlanConfig &c) const {
    bool kept = c.recomputeEvery <= 1;
    return forward + backward + rebuilt(kept) + comm(kept, kept);
  }
};

/// Matrix-unit seconds per sample of a segment kind's forward and backward
/// passes at `tp`'s degree and micro-batches of `microBatch` samples, from
/// the device's measured GEMM table: each forward GEMM at the shape each
/// device runs, and its two gradients (the input's, C = dY W^T, and the
/// weight's, read transposed: X^T dY), scaled to the backward pass's
/// profiled FLOPs; and the forward GEMMs of the values the backward pass
/// reads. Nothing without a table for the precision.
std::optional<PlanProblem::MatmulSeconds>
matmulSeconds(const PlanProblem &problem, const SegmentKind &k,
              unsigned kind, const TPProfile &tp, int64_t microBatch) {
  const Device &device = problem.cluster.device;
  int64_t t = tp.degree;
  if (!device.gemm.count(problem.precision) || tp.gemms.empty())
    return std::nullopt;
  auto [memo, fresh] = problem.matmulSeconds.try_emplace(
      {static_cast<int64_t>(kind), t, microBatch});
  if (!fresh)
    return memo->second;
  using G = TPProfile::Gemm;
  double mb = static_cast<double>(microBatch), forward = 0, backward = 0,
         needed = 0, flops = 0;
  for (const G &g : tp.gemms) {
    auto part = [&](G::Split dim) { return g.split == dim ? double(t) : 1.0; };
    // Time for the FLOPs computed; the backward scale below is over the
    // model's.
    double f = g.flops * g.computed * mb / (g.split == G::None ? 1 : t);
    double m = g.m * mb / part(G::Rows), n = g.n / part(G::Columns),
           d = g.k / part(G::Depth);
    const std::string &p = problem.precision;
    double seconds = gemmSeconds(device, p, f, m, n, d);
    forward += seconds;
    if (g.needed)
      needed += seconds;
    // The B gradient sums over each product's own rows: a batch of
    // d x n products (as one GEMM with the batch folded into its rows).
    double products = g.rows > 0 ? std::max(1.0, m / g.rows) : 1;
    backward += gemmSeconds(device, p, f, m, d, n) +
                gemmSeconds(device, p, f, d * products, n, m / products,
                            /*transposedA=*/true);
    flops += g.flops;
  }
  // The profile's backward FLOPs over the two gradients of every GEMM
  // (fewer where an operand needs none).
  double scale = flops > 0 ? (k.trainFlops - k.forwardFlops) / (2 * flops) : 1;
  memo->second = {forward / mb, backward * scale / mb, needed / mb};
  return memo->second;
}

/// What the attention softmaxes the device's kernel library cannot fuse
/// (Device::SoftmaxFusion) add to each pass of a micro-batch: kernels and
/// seconds, of all of them and of those selective recomputation, and full
/// recomputation of the needed values, repeat.
struct SoftmaxFallback {
  double kernels = 0, seconds = 0, selectiveKernels = 0, selectiveSeconds = 0,
         neededKernels = 0, neededSeconds = 0;
};
SoftmaxFallback softmaxFallback(const Device &device, const TPProfile &tp,
                                double microBatch) {
  const Device::SoftmaxFusion &rule = device.softmaxFusion;
  SoftmaxFallback f;
  for (const TPProfile::Softmax &s : tp.softmaxes) {
    if (rule.fused(s.batches * microBatch, s.keys))
      continue;
    // The profile prices the fused kernel; each further one reads and
    // writes the scores in f32.
    double extra = std::max(0.0, rule.fallbackKernels - 1);
    double bytes = 2 * 4 * s.elements * microBatch;
    double seconds =
        extra * (device.kernelOverhead + memorySeconds(device, bytes));
    f.kernels += extra;
    f.seconds += seconds;
    if (s.selective) {
      f.selectiveKernels += extra;
      f.selectiveSeconds += seconds;
    }
    if (s.needed) {
      f.neededKernels += extra;
      f.neededSeconds += seconds;
    }
  }
  return f;
}

/// What the update after the backward pass adds to `state` (StageMemory::
/// update): under ZeRO 1 and 2 with data parallelism, the parameters
/// gathered from the updated shards beside the old ones.
double updateBytes(const PlanConfig &c, const ModelState &state) {
  bool gathered = c.dp > 1 && (c.zeroStage == 1 || c.zeroStage == 2);
  return gathered ? state.parameters : 0;
}

SegmentCost segmentCost(const PlanProblem &problem, const PlanConfig &c,
                        unsigned index) {
  const ModelProfile &m = *problem.profile;
  const Segment &seg = m.segments[index];
  const SegmentKind &k = m.kinds[seg.kind];
  const TPProfile &tp = k.at(c.tp);
  int64_t t = c.tp;
  bool sp = c.sequenceParallel && t > 1;
  double mb = static_cast<double>(c.microBatch);
  SegmentCost s;
  std::optional<PlanProblem::MatmulSeconds> measured =
      matmulSeconds(problem, k, seg.kind, tp, c.microBatch);
  double fwdMM = measured ? measured->forward : tp.forwardMatmul.at(t, sp),
         fwdOther = tp.forwardOther.at(t, sp);
  auto ratio = [](double part, double whole) {
    return whole > 0 ? part / whole : 1.0;
  };
  double launch = problem.cluster.device.kernelOverhead;
  s.forward = (fwdMM + fwdOther) * mb + tp.forwardKernels * launch;
  double backwardMatmul =
      (measured ? measured->backward
                : k.backwardMatmul * ratio(fwdMM, tp.forwardMatmul.total())) *
      mb;
  s.backward = backwardMatmul +
               k.backwardOther * ratio(fwdOther, tp.forwardOther.total()) * mb +
               k.backwardKernels * launch;
  // Of the backward matmuls, those that make weight gradients (one of the
  // two each forward matmul needs).
  s.weight = backwardMatmul / 2;
  s.forwardKernels = tp.forwardKernels;
  s.backwardKernels = k.backwardKernels;
  SoftmaxFallback fallback =
      softmaxFallback(problem.cluster.device, tp, mb);
  s.forward += fallback.seconds;
  s.backward += fallback.seconds;
  s.forwardKernels += fallback.kernels;
  s.backwardKernels += fallback.kernels;
  // Each collective in the passes that run it (those of the walk with
  // sequence parallelism under it); the forward ones again under full
  // recomputation.
  // (Per kind and micro-batch size: the search asks again and again.)
  auto [memo, fresh] = problem.collectiveTimes.try_emplace(
      {static_cast<int64_t>(seg.kind), t, sp, c.microBatch});
  PlanProblem::CollectiveTimes &times = memo->second;
  if (fresh)
    for (const TPCollective &col : tp.collectivesFor(sp)) {
      double time = groupCollectiveTime(
          col.kind, col.elementsFor(mb) * m.floatBytes, t, 1, problem.cluster);
      if (col.pass != TPCollective::Pass::Backward && !col.ofParameter) {
        times.forward += time;
        if (col.recomputedAtStageEnd)
          times.neededAtStageEnd += time;
        if (col.ofInput && col.recomputedAtStageEnd)
          times.ofInputAtStageEnd += time;
      }
      if (col.oncePerStep)
        times.perStep += time;
      else
        times.perMicroBatch += time * col.timesPerMicroBatch();
      if (col.ofSelective)
        times.selective += time;
    }
  s.tpComm = times.perMicroBatch +
             times.perStep / static_cast<double>(c.numMicroBatches);
  double none = tp.saved.at(t, sp);
  bool last = index + 1 == m.segments.size();
  switch (c.recompute) {
  case Recompute::None:
    s.saved = none;
    break;
  case Recompute::Selective:
    s.saved = none - tp.selectiveSaved.at(t, sp);
    s.recompute = tp.selectiveTime.at(t, sp) * mb +
                  tp.selectiveKernels * launch + fallback.selectiveSeconds;
    s.backwardKernels += tp.selectiveKernels + fallback.selectiveKernels;
    s.tpComm += times.selective;
    s.working = tp.selectiveSaved.at(t, sp);
    break;
  case Recompute::Full:
    if (last) {
      s.saved = none;
      break;
    }
    // Keep the segment's input; rebuild the rest during backward.
    s.saved = index == 0 ? 0
                         : m.segments[index - 1].boundaryElements * m.floatBytes /
                               (sp ? t : 1);
    s.recompute = s.forward;
    s.backwardKernels += s.forwardKernels;
    s.tpComm += times.forward;
    s.working = none;
    if (problem.cluster.device.recomputeWholeForward)
      break;
    s.notAtStageEnd = times.forward - times.neededAtStageEnd;
    s.notAtStageStart = times.ofInputAtStageEnd;
    {
      double neededMM = measured ? measured->needed
                                 : tp.neededMatmul.at(t, sp);
      s.notRebuilt = s.forward - (neededMM + tp.neededOther.at(t, sp)) * mb -
                     tp.neededKernels * launch - fallback.neededSeconds;
      s.notRebuiltKernels =
          s.forwardKernels - tp.neededKernels - fallback.neededKernels;
    }
    break;
  }
  s.saved *= mb;
  // The segment's activations rebuilt for its backward pass, and its
  // largest value (a transient while its gradient is formed).
  s.working *= mb;
  s.largest = k.largestValue * mb / (t > 1 && tp.forwardMatmul.split > 0 ? t : 1);
  // Tensor parallelism splits attention by heads and a convolution's
  // columns with its input, except where it leaves them whole.
  s.scores = std::max(k.loweringWorkspace / t, tp.wholeWorkspace) * mb;
  s.parameters = tp.parameters.at(t, false);
  return s;
}

/// The passes of one model chunk on its device.
struct PassCost {
  LaunchQueue forward, backward;
  double weight = 0, tpComm = 0;
  /// Adds a segment; where full recomputation keeps its input or its
  /// output it repeats fewer of its collectives. The collectives run in
  /// the device's queue, between the kernels (half in each pass).
  void add(const Device &d, const SegmentCost &s, bool keptInput,
           bool keptOutput) {
    double comm = s.comm(keptInput, keptOutput);
    double kernels = s.backwardKernels - (keptOutput ? s.notRebuiltKernels : 0);
    forward.add(s.forwardKernels * d.launchOverhead, s.forward + comm / 2);
    backward.add(kernels * d.launchOverhead,
                 s.backward + s.rebuilt(keptOutput) + comm / 2);
    weight += s.weight;
    tpComm += comm;
  }
  /// Zero-bubble runs the weight-gradient part of the backward pass apart.
  ChunkTimes times(const Device &d, Schedule schedule) const {
    ChunkTimes t;
    t.forward = forward.seconds(d, /*reversed=*/false);
    double back = backward.seconds(d, /*reversed=*/true);
    t.weight = schedule == Schedule::ZeroBubble ? std::min(weight, back) : 0;
    t.backward = back - t.weight;
    return t;
  }
};
} // namespace

/// Every segment's cost. Segments of one kind cost the same, except where
/// full recomputation depends on the position (the first keeps no input,
/// the last is not recomputed, the others keep their predecessor's output):
/// held per kind (the search evaluates many plans; no vector per segment).
class SegmentCosts {
public:
  SegmentCosts(const PlanProblem &problem, const PlanConfig &c)
      : m(*problem.profile), full(c.recompute == Recompute::Full) {
    unsigned n = m.segments.size();
    byKind.resize(m.kinds.size());
    std::vector<bool> done(m.kinds.size(), false);
    for (unsigned i = 0; i < n; ++i) {
      unsigned k = m.segments[i].kind;
      if (!done[k] && !(full && (i == 0 || i + 1 == n))) {
        byKind[k] = segmentCost(problem, c, i);
        done[k] = true;
      }
    }
    if (full) {
      first = segmentCost(problem, c, 0);
      last = segmentCost(problem, c, n - 1);
      keptPerElement = static_cast<double>(m.floatBytes) /
                       (c.sequenceParallel && c.tp > 1 ? c.tp : 1) *
                       c.microBatch;
    }
    if (full && c.recomputeGroups != 0) {
      PlanConfig none = c;
      none.recompute = Recompute::None;
      plainByKind.resize(m.kinds.size());
      std::vector<bool> seen(m.kinds.size(), false);
      for (unsigned i = 0; i < n; ++i)
        if (unsigned k = m.segments[i].kind; !seen[k]) {
          plainByKind[k] = segmentCost(problem, none, i);
          seen[k] = true;
        }
    }
  }
  /// Segment `i`'s cost, rebuilt by full recomputation or not (after the
  /// block method's groups a segment saves what its backward pass reads).
  SegmentCost at(unsigned i, bool rebuilt) const {
    if (rebuilt || plainByKind.empty() || i + 1 == m.segments.size())
      return (*this)[i];
    return plainByKind[m.segments[i].kind];
  }
  SegmentCost operator[](unsigned i) const {
    unsigned n = m.segments.size();
    if (full && i == 0)
      return first;
    if (full && i + 1 == n)
      return last;
    SegmentCost s = byKind[m.segments[i].kind];
    if (full)
      s.saved = m.segments[i - 1].boundaryElements * keptPerElement;
    return s;
  }

private:
  const ModelProfile &m;
  bool full;
  double keptPerElement = 0;
  SmallVector<SegmentCost, 8> byKind, plainByKind;
  SegmentCost first, last;
};

/// Micro-batches whose activations are live at once on pipeline device `j`.
static double microBatchesInFlight(const PlanConfig &c, int64_t j) {
  int64_t p = c.pp, mbs = c.numMicroBatches;
  switch (c.schedule) {
  case Schedule::GPipe:
    return mbs;
  case Schedule::Interleaved: {
    double warmup = std::min<double>((p - j - 1) * 2 + (c.chunks - 1) * p,
                                     mbs * c.chunks - 1);
    return (warmup + 1) / c.chunks;
  }
  case Schedule::ZeroBubble:
    // 1F1B's p - j, and the inputs of the weight-gradient passes device j
    // defers by up to j passes (pipelineOrder): about p on every device
    // (counted whole: the deferred passes hold part of the activations).
    return std::min<int64_t>(p, mbs);
  default:
    return std::min<int64_t>(p - j, mbs);
  }
}

std::vector<unsigned>
mlir::ober::planning::memoryAwarePartition(const PlanProblem &problem,
                                           const PlanConfig &c) {
  const ModelProfile &m = *problem.profile;
  unsigned n = m.segments.size();
  int64_t p = c.pp;
  if (c.chunks != 1 || p < 2 || static_cast<int64_t>(n) < p)
    return {};
  bool mixed = problem.precision != "f32" && problem.precision != "f64";
  std::vector<double> time(n), state(n), saved(n), working(n), update(n);
  SegmentCosts costs(problem, c);
  for (unsigned i = 0; i < n; ++i) {
    SegmentCost s = costs[i];
    time[i] = s.seconds(c);
    ModelState ms = modelStateBytes(s.parameters, m.floatBytes, mixed,
                                    m.optimizer, c.zeroStage, c.dp);
    state[i] = ms.total();
    update[i] = updateBytes(c, ms);
    saved[i] = s.saved;
    working[i] = s.working + 2 * s.largest;
  }
  // Greedy packing under a time bound and the memory limit (with a margin
  // for what the estimate leaves out: inputs, gradient transients).
  double limit = 0.95 * problem.memoryLimit;
  auto pack = [&](double bound, std::vector<unsigned> *starts) {
    unsigned i = 0;
    for (int64_t j = 0; j < p && i < n; ++j) {
      if (starts)
        starts->push_back(i);
      double t = 0, st = 0, sv = 0, wk = 0, up = 0,
             flight = microBatchesInFlight(c, j);
      unsigned first = i;
      // Leave at least one segment for each later stage.
      while (i + (p - j - 1) < n) {
        double mem = st + state[i] +
                     std::max((sv + saved[i]) * flight + std::max(wk, working[i]),
                              up + update[i]);
        if (i > first && (t + time[i] > bound || mem > limit))
          break;
        if (i == first && mem > limit)
          return false;
        t += time[i];
        st += state[i];
        sv += saved[i];
        wk = std::max(wk, working[i]);
        up += update[i];
        ++i;
      }
    }
    return i == n;
  };
  double lo = 0, hi = 0;
  for (double t : time) {
    lo = std::max(lo, t);
    hi += t;
  }
  if (!pack(hi, nullptr))
    return {};
  // A partition within 0.1% of the best bound is as good as the estimate.
  for (int k = 0; k < 50 && hi - lo > 1e-3 * hi; ++k) {
    double mid = (lo + hi) / 2;
    (pack(mid, nullptr) ? hi : lo) = mid;
  }
  std::vector<unsigned> starts;
  if (!pack(hi, &starts) || static_cast<int64_t>(starts.size()) != p)
    return {};
  return starts;
}

double mlir::ober::planning::segmentSeconds(const PlanProblem &problem,
                                            const PlanConfig &config,
                                            unsigned index) {
  return segmentCost(problem, config, index).seconds(config);
}

/// Whether segment `i` of a chunk starting at `first` starts a group of
/// segments full recomputation rebuilds together (it keeps the group's
/// input): every recomputeEvery-th from the chunk's start.
static bool startsGroup(const PlanConfig &c, unsigned first, unsigned i) {
  return (i - first) % std::max<int64_t>(1, c.recomputeEvery) == 0;
}

/// Whether segment `i` of a chunk starting at `first` ends such a group
/// (`chunkEnds`: the next segment starts another chunk): its output is the
/// next group's kept input. The model's last segment, not recomputed,
/// keeps its input, so the one before it ends a group too.
static bool endsGroup(const PlanConfig &c, unsigned segments, unsigned first,
                      bool chunkEnds, unsigned i);

/// Whether full recomputation rebuilds segment `i` of a chunk starting at
/// `first` (rebuildsSegment).
static bool rebuilds(const PlanConfig &c, unsigned segments, unsigned first,
                     unsigned i) {
  if (c.recompute != Recompute::Full || i + 1 >= segments)
    return false;
  int64_t every = std::max<int64_t>(1, c.recomputeEvery);
  return c.recomputeGroups <= 0 ||
         static_cast<int64_t>(i - first) / every < c.recomputeGroups;
}

/// (Also where the block method stops rebuilding: the next segment keeps
/// what its backward pass reads, this one's output among it.)
static bool endsGroup(const PlanConfig &c, unsigned segments, unsigned first,
                      bool chunkEnds, unsigned i) {
  return i + 2 >= segments || chunkEnds || startsGroup(c, first, i + 1) ||
         !rebuilds(c, segments, first, i + 1);
}

/// Segment i's saved bytes and working set when rebuilt ([i][1]) or not
/// ([i][0]): `activationsOf` reads them for each granularity it tries.
using SegmentActivations = std::vector<std::array<std::array<double, 2>, 2>>;

static SegmentActivations activationsBySegment(const SegmentCosts &costs,
                                               unsigned segments) {
  SegmentActivations out(segments);
  for (unsigned i = 0; i < segments; ++i)
    for (bool again : {false, true}) {
      SegmentCost s = costs.at(i, again);
      out[i][again] = {s.saved, s.working};
    }
  return out;
}

/// Bytes per micro-batch one device saves for the backward pass over its
/// chunks, and the most a micro-batch's backward pass holds beyond them:
/// walking its chunk backwards it frees what the segments it has passed
/// saved, and rebuilds each recomputed group when it reaches it, so a
/// group's rebuilt activations count less what the chunk's later
/// segments saved. Full
/// recomputation keeps the input of each group of segments (startsGroup,
/// as keepsInput) and rebuilds a group together; the segments it does not
/// rebuild (the model's last, those after the block method's groups) save
/// what their backward passes read.
static std::pair<double, double>
activationsOf(const PlanEstimate &plan, const SegmentActivations &costs,
              ArrayRef<std::pair<unsigned, unsigned>> chunks) {
  unsigned n = costs.size();
  double saved = 0, working = 0;
  for (auto [first, end] : chunks) {
    // What the segments after the current one saved (freed by now), and
    // the activations of the group being rebuilt.
    double passed = 0, group = 0;
    for (unsigned i = end; i-- > first;) {
      bool again = rebuilds(plan.config, n, first, i);
      auto [segmentSaved, segmentWorking] = costs[i][again];
      if (!again) {
        saved += segmentSaved;
        working = std::max(working, segmentWorking - passed);
        passed += segmentSaved;
        continue;
      }
      group += segmentWorking;
      if (!startsGroup(plan.config, first, i))
        continue;
      saved += segmentSaved;
      working = std::max(working, group - passed);
      passed += segmentSaved;
      group = 0;
    }
  }
  return {saved, working};
}

/// The FLOPs of the step and the activations each kind saves.
static void flopsOfStep(const PlanProblem &problem, const PlanConfig &c,
                        const SegmentCosts &costs, PlanEstimate &e) {
  const ModelProfile &m = *problem.profile;
  unsigned n = m.segments.size();
  // FLOPs of the whole step.
  double samples = static_cast<double>(problem.globalBatch);
  e.modelFlops = m.trainFlops * samples;
  double again = 0;
  e.kindActivationBytes.assign(m.kinds.size(), 0);
  for (const StageEstimate &st : e.stages)
    for (auto [first, end] : st.chunks)
      for (unsigned i = first; i < end; ++i) {
        unsigned kind = m.segments[i].kind;
        const SegmentKind &k = m.kinds[kind];
        bool rebuilt = rebuilds(e.config, n, first, i);
        bool whole = problem.cluster.device.recomputeWholeForward ||
                     !endsGroup(e.config, n, first,
                                i + 1 == end, i);
        if (rebuilt)
          again += whole ? k.forwardFlops : k.at(c.tp).neededFlops;
        else if (c.recompute == Recompute::Selective)
          again += k.at(c.tp).selectiveFlops;
        // (The most a segment of the kind saves: under the block method
        // some are rebuilt and some not.)
        e.kindActivationBytes[kind] = std::max(
            e.kindActivationBytes[kind], costs.at(i, rebuilt).saved);
      }
  e.hardwareFlops = e.modelFlops + (again + m.repeatedFlops) * samples;
}

PlanEstimate mlir::ober::planning::evaluate(const PlanProblem &problem,
                                            const PlanConfig &c,
                                            ArrayRef<unsigned> starts,
                                            double simulateBelow) {
  const ModelProfile &m = *problem.profile;
  const Cluster &cluster = problem.cluster;
  PlanEstimate e;
  e.config = c;
  unsigned n = m.segments.size();
  SegmentCosts costs(problem, c);
  double mb = static_cast<double>(c.microBatch);
  double w = m.floatBytes;
  bool mixed = problem.precision != "f32" && problem.precision != "f64";
  int64_t groups = static_cast<int64_t>(starts.size());
  int64_t p = c.pp, mbs = c.numMicroBatches;
  // Pipeline sends go to ranks tp * dp apart; each tensor-parallel rank
  // sends its 1/t share (Megatron's scatter/gather).
  int64_t pipeStride = c.tp * c.dp;
  e.stages.resize(p);
  // What each stage holds apart from saved activations and the working
  // set of recomputation, which depend on the recomputation granularity.
  std::vector<StageMemory> held(p);
  for (int64_t j = 0; j < p; ++j) {
    StageEstimate &st = e.stages[j];
    double params = 0, largest = 0, scores = 0;
    bool last = false, ends = false;
    for (int64_t g = j; g < groups; g += p) {
      unsigned first = starts[g];
      unsigned end = g + 1 < groups ? starts[g + 1] : n;
      st.chunks.push_back({first, end});
      for (unsigned i = first; i < end; ++i) {
        SegmentCost s = costs[i];
        params += s.parameters;
        largest = std::max(largest, s.largest);
        scores = std::max(scores, s.scores);
        last |= i + 1 == n;
        ends |= i == 0 || i + 1 == n;
      }
    }
    auto holds = [&](unsigned segment) {
      return llvm::any_of(st.chunks, [&](auto range) {
        return range.first <= segment && segment < range.second;
      });
    };
    for (const SharedParameter &sh : m.shared)
      if (holds(sh.first) && holds(sh.last))
        params -= sh.elements /
                  (m.kinds[m.segments[sh.first].kind].at(c.tp).parameters.split >
                           0
                       ? c.tp
                       : 1);
    st.inFlight = static_cast<int64_t>(std::ceil(microBatchesInFlight(c, j)));
    st.parameterElements = params;
    ModelState state = modelStateBytes(params, w, mixed, m.optimizer,
                                       c.zeroStage, c.dp);
    // Without accumulation over micro-batches, gradients only exist from
    // their backward op to the update: at the peak, the gradient function
    // holds the share its liveness says; but data parallelism reduces
    // them after the backward pass, so all of them wait for it.
    bool reduced = c.dp > 1 && c.localSteps == 1;
    if (mbs == 1 && !reduced && m.parameters > 0)
      state.gradients = std::min(state.gradients,
                                 m.gradientsAtPeak * params / m.parameters);
    StageMemory &h = held[j];
    h.parameters = state.parameters;
    h.gradients = state.gradients;
    h.optimizer = state.optimizer;
    h.update = updateBytes(c, state);
    // Beyond the saved activations, the backward pass needs gradients of
    // activations: at the peak (the start of the backward pass, on the
    // last stage) the gradient function's liveness says how much; other
    // stages hold about two of their largest values, or, where gradients
    // accumulate over micro-batches, the micro-batch's own parameter
    // gradients, which the pass returns while it holds its inputs.
    double extra = std::max(0.0, m.activationPeak - m.savedTotal) * mb /
                   (c.tp > 1 ? c.tp : 1);
    double fresh = mbs > 1 ? params * w : 0;
    h.working = last ? extra : std::max(std::min(extra, 2 * largest), fresh);
    // An attention's block of scores comes on top, while it runs.
    h.working += scores;
    // The first and last stages read the batch inputs.
    if (ends)
      h.working += m.inputBytes * mb;
  }
  e.starts.assign(starts.begin(), starts.end());
  // Saved activations and recomputation's working set at a granularity;
  // under full recomputation with none pinned, the finest that fits.
  SegmentActivations activations = activationsBySegment(costs, n);
  auto holdActivations = [&](int64_t every) {
    e.config.recomputeEvery = every;
    e.peakMemory = 0;
    for (int64_t j = 0; j < p; ++j) {
      StageEstimate &st = e.stages[j];
      auto [saved, working] = activationsOf(e, activations, st.chunks);
      st.memory = held[j];
      st.memory.activations = saved * microBatchesInFlight(c, j);
      st.memory.working += working;
      if (st.memory.total() > e.peakMemory) {
        e.peakMemory = st.memory.total();
        e.peakStage = j;
      }
    }
    return e.peakMemory <= problem.memoryLimit;
  };
  // The longest chunk bounds the useful granularities.
  int64_t longest = 1;
  for (const StageEstimate &st : e.stages)
    for (auto [first, end] : st.chunks)
      longest = std::max<int64_t>(longest, end - first);
  bool chooseGroups = c.recompute == Recompute::Full && c.recomputeGroups < 0;
  if (chooseGroups)
    e.config.recomputeGroups = 0; // every group while choosing the size
  if (c.recompute != Recompute::Full || c.recomputeEvery > 0) {
    holdActivations(std::max<int64_t>(1, c.recomputeEvery));
  } else {
    int64_t every = 1, leanest = 1;
    double least = HUGE_VAL;
    for (; every <= longest; ++every) {
      if (holdActivations(every))
        break;
      if (e.peakMemory < least)
        least = e.peakMemory, leanest = every;
    }
    if (every > longest)
      holdActivations(leanest);
  }
  // The block method: the fewest groups per chunk that still fit (each
  // group not rebuilt saves its recomputation; memory grows as they drop).
  if (chooseGroups && e.peakMemory <= problem.memoryLimit) {
    // (The most groups a chunk has of segments it can rebuild: not the
    // model's last.)
    int64_t every = e.config.recomputeEvery, all = 1;
    for (const StageEstimate &st : e.stages)
      for (auto [first, end] : st.chunks)
        all = std::max<int64_t>(
            all, (end - first - (end == n) + every - 1) / every);
    int64_t lo = 1, hi = all;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      e.config.recomputeGroups = mid;
      if (holdActivations(every))
        hi = mid;
      else
        lo = mid + 1;
    }
    e.config.recomputeGroups = lo < all ? lo : 0;
    holdActivations(every);
  }
  // Each virtual stage's passes (chunk g / p of device g % p).
  std::vector<ChunkTimes> chunkTimes(groups);
  std::vector<double> chunkTP(groups);
  for (int64_t j = 0; j < p; ++j) {
    StageEstimate &st = e.stages[j];
    double p2p = 0;
    for (int64_t g = j; g < groups; g += p) {
      unsigned first = starts[g];
      unsigned end = g + 1 < groups ? starts[g + 1] : n;
      PassCost pass;
      for (unsigned i = first; i < end; ++i)
        pass.add(cluster.device,
                 costs.at(i, rebuilds(e.config, n, first, i)),
                 startsGroup(e.config, first, i),
                 endsGroup(e.config, n, first, i + 1 == end, i));
      // (Added to what the transfers from the virtual stage before put
      // there.)
      ChunkTimes own = pass.times(cluster.device, c.schedule);
      chunkTimes[g].forward += own.forward;
      chunkTimes[g].backward += own.backward;
      chunkTimes[g].weight += own.weight;
      chunkTP[g] = pass.tpComm;
      st.forward += own.forward;
      st.backward += own.backward + own.weight;
      st.tpComm += pass.tpComm;
      if (g + 1 < groups) {
        // Each tensor-parallel rank sends its share of the activation and
        // the receivers all-gather it (Megatron's scatter-gather).
        const Segment &last = m.segments[end - 1];
        double bytes = last.boundaryElements * mb * w / c.tp;
        double send = sendTime(bytes, pipeStride, cluster);
        chunkTimes[g].sendForward = send;
        if (last.gradientBack)
          chunkTimes[g + 1].sendBackward = send;
        // The transfer blocks the passes at both of its ends.
        double block = cluster.device.transferOverhead;
        chunkTimes[g].forward += block;
        chunkTimes[g + 1].forward += block;
        if (last.gradientBack) {
          chunkTimes[g].backward += block;
          chunkTimes[g + 1].backward += block;
        }
        p2p += (last.gradientBack ? 2 : 1) * send;
      }
    }
    e.p2pComm = std::max(e.p2pComm, p2p * mbs);
  }
  e.fits = e.peakMemory <= problem.memoryLimit;
  // The optimizer: gradient and parameter at the precision, fp32 master
  // and moments read and written. Before it, passes over the (f32)
  // gradients: the data-parallel buckets copy them in and out
  // (Gradients.cpp: a concatenation, then slices of the reduced bucket, a
  // share of it under ZeRO), and each norm (clipping's or the reported
  // one, the loss-scaling overflow probe) reads what the device updates.
  const Device &dev = cluster.device;
  double slots = optimizerSlots(m.optimizer);
  double norms = (problem.clipNorm || problem.gradNorm) + problem.lossScaling;
  bool buckets = c.dp > 1 && c.localSteps <= 1;
  for (const StageEstimate &st : e.stages) {
    double elements = st.parameterElements / (c.zeroStage >= 1 ? c.dp : 1);
    double bytesPerElement = 2 * w + (mixed ? 8 : 0) + 8 * slots;
    double seconds = memorySeconds(dev, elements * bytesPerElement) +
                     norms * memorySeconds(dev, elements * 4);
    if (buckets)
      seconds += memorySeconds(dev, st.parameterElements * 8) +
                 memorySeconds(dev, elements * 8);
    e.optimizer = std::max(e.optimizer, seconds);
  }
  double busiestPasses = 0;
  for (const StageEstimate &st : e.stages)
    busiestPasses = std::max(busiestPasses, mbs * (st.forward + st.backward));
  if (!e.fits || busiestPasses + e.optimizer >= simulateBelow) {
    e.compute = busiestPasses;
    e.stepTime = busiestPasses + e.optimizer;
    e.chunkTimes = std::move(chunkTimes);
    flopsOfStep(problem, c, costs, e);
    return e;
  }
  e.simulated = true;
  Timeline timeline =
      simulatePipeline(c.schedule, p, mbs, c.chunks, chunkTimes);
  // The data-parallel reduction of each stage's gradients overlaps that
  // stage's last backward pass (buckets fill as it runs); stages that
  // finish early hide it in the pipeline's drain.
  double end = timeline.makespan;
  for (int64_t j = 0; j < p; ++j) {
    StageEstimate &st = e.stages[j];
    double lastBackward = timeline.finish[j] - timeline.lastBackwardStart[j];
    // Gradients reduce in f32 (accumulated there whatever the compute
    // precision, like the updated master weights ZeRO shares); ZeRO-3
    // gathers compute copies.
    double gradBytes = st.parameterElements * 4;
    double reduce, exposed;
    if (c.localSteps > 1) {
      // Local SGD: nothing reduced in the step; every H steps the replicas
      // average their parameters' deltas (f32), between steps.
      reduce = groupCollectiveTime(Collective::AllReduce, gradBytes, c.dp, c.tp,
                                   cluster) /
               static_cast<double>(c.localSteps);
      exposed = reduce;
    } else {
      reduce = c.zeroStage == 0
                   ? groupCollectiveTime(Collective::AllReduce, gradBytes, c.dp,
                                         c.tp, cluster)
                   : groupCollectiveTime(Collective::ReduceScatter, gradBytes,
                                         c.dp, c.tp, cluster) +
                         groupCollectiveTime(Collective::AllGather, gradBytes,
                                             c.dp, c.tp, cluster);
      // Buckets of 25 MB: the last one cannot overlap.
      double lastBucket =
          reduce * std::min(1.0, 25e6 / std::max(gradBytes, 1.0));
      exposed = std::max(reduce - lastBackward, lastBucket);
      if (c.zeroStage >= 3) {
        // Parameters are gathered for every forward and backward pass.
        double gather =
            groupCollectiveTime(Collective::AllGather, st.parameterElements * w,
                                c.dp, c.tp, cluster);
        reduce += 2 * mbs * gather;
        exposed +=
            gather + std::max(0.0, 2 * mbs * gather - timeline.busy[j]);
      }
    }
    e.dpComm = std::max(e.dpComm, reduce);
    end = std::max(end, timeline.finish[j] + exposed);
  }
  e.dpCommExposed = std::isfinite(timeline.makespan)
                        ? end - timeline.makespan
                        : 0;
  // The busiest device: its passes, the tensor-parallel collectives in
  // them, and its idle time (warm-up, drain, waiting for transfers).
  int64_t busiest = std::max_element(timeline.busy.begin(),
                                     timeline.busy.end()) -
                    timeline.busy.begin();
  e.tpComm = 0;
  for (int64_t g = busiest; g < groups; g += p)
    e.tpComm += mbs * chunkTP[g];
  e.compute = timeline.busy[busiest] - e.tpComm;
  e.bubble = timeline.makespan - timeline.busy[busiest];
  e.exposedComm = e.tpComm + e.dpCommExposed;
  e.stepTime = end + e.optimizer;
  e.chunkTimes = std::move(chunkTimes);
  flopsOfStep(problem, c, costs, e);
  return e;
}

/// The first segment of the chunk that holds `segment`.
static unsigned chunkStart(const PlanEstimate &plan, unsigned segment) {
  unsigned first = 0;
  for (unsigned s : plan.starts)
    if (s <= segment)
      first = std::max(first, s);
  return first;
}

bool mlir::ober::planning::rebuildsSegment(const PlanEstimate &plan,
                                           const ModelProfile &m,
                                           unsigned segment) {
  return rebuilds(plan.config, m.segments.size(), chunkStart(plan, segment),
                  segment);
}

bool mlir::ober::planning::keepsInput(const PlanEstimate &plan,
                                      const ModelProfile &m,
                                      unsigned segment) {
  return startsGroup(plan.config, chunkStart(plan, segment), segment);
}

bool mlir::ober::planning::keepsOutput(const PlanEstimate &plan,
                                       const ModelProfile &m,
                                       unsigned segment) {
  return endsGroup(plan.config, m.segments.size(),
                   chunkStart(plan, segment),
                   llvm::is_contained(plan.starts, segment + 1), segment);
}

bool mlir::ober::planning::recomputes(const PlanEstimate &plan,
                                      const ModelProfile &m, unsigned segment,
                                      Operation *op) {
  const PlanConfig &c = plan.config;
  const Segment &seg = m.segments[segment];
  if (c.recompute == Recompute::Selective)
    return llvm::is_contained(seg.selective, op);
  if (!rebuildsSegment(plan, m, segment))
    return false;
  // Full recomputation keeps the output of a segment that ends a group
  // (the next group's input, which it rebuilds from): the op that makes it
  // runs once.
  return !seg.boundary || seg.boundary.getDefiningOp() != op ||
         !keepsOutput(plan, m, segment);
}
