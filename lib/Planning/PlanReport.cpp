//===- PlanReport.cpp - the plan as JSON, as a table, and explained -------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Plan.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace mlir::ober::planning;

std::string mlir::ober::planning::describeRecompute(const PlanConfig &c) {
  std::string s = stringifyRecompute(c.recompute).str();
  if (c.recompute != Recompute::Full)
    return s;
  std::vector<std::string> how;
  if (c.recomputeEvery > 1)
    how.push_back("every " + std::to_string(c.recomputeEvery) + " segments");
  if (c.recomputeGroups == 1)
    how.push_back("the first group of each stage");
  else if (c.recomputeGroups > 1)
    how.push_back("the first " + std::to_string(c.recomputeGroups) +
                  " groups of each stage");
  return how.empty() ? s : s + " (" + llvm::join(how, ", ") + ")";
}

namespace json = llvm::json;

namespace {
double peakOf(const PlanProblem &problem) {
  return peakFlopsOf(problem.cluster.device, problem.precision);
}

double perGPU(const PlanProblem &problem, const PlanEstimate &plan,
              double flops) {
  return flops / plan.stepTime / problem.cluster.numDevices() / 1e12;
}

std::string collectiveName(Collective k) {
  switch (k) {
  case Collective::AllReduce:
    return "all-reduce";
  case Collective::AllGather:
    return "all-gather";
  case Collective::ReduceScatter:
    return "reduce-scatter";
  case Collective::AllToAll:
    return "all-to-all";
  case Collective::Broadcast:
    return "broadcast";
  }
  return "collective";
}

} // namespace

std::string mlir::ober::planning::formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024) {
    bytes /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format(u ? "%.2f %s" : "%.0f %s", bytes,
                                              units[u]);
  return s;
}

std::vector<PlannedCollective>
mlir::ober::planning::plannedCollectives(const PlanProblem &problem,
                                         const PlanEstimate &plan) {
  const PlanConfig &c = plan.config;
  const ModelProfile &m = *problem.profile;
  double mb = static_cast<double>(c.microBatch), w = m.floatBytes;
  int64_t micro = c.numMicroBatches;
  unsigned n = m.segments.size();
  std::vector<PlannedCollective> out;
  // Which stages read each parameter, and how tensor parallelism splits it.
  auto stageOfSegment = [&](unsigned segment) {
    for (auto [k, other] : llvm::enumerate(plan.stages))
      for (auto [first, end] : other.chunks)
        if (first <= segment && segment < end)
          return static_cast<int64_t>(k);
    return int64_t(0);
  };
  llvm::StringMap<int64_t> firstStage, lastStage;
  std::vector<llvm::StringSet<>> readBy(plan.stages.size()),
      recomputedReads(plan.stages.size());
  // The ops recomputation runs again: recomputed ones whose results the
  // backward pass of their stage reads, directly or through others (the
  // partitioner rebuilds only those, Stages.cpp), or every recomputed one
  // where the device's executor reruns whole forward passes; ZeRO-3
  // gathers what they read again.
  DenseMap<Operation *, std::pair<unsigned, int64_t>> forwardAt;
  for (auto [i, seg] : llvm::enumerate(m.segments))
    for (Operation *op : seg.ops)
      forwardAt[op] = {static_cast<unsigned>(i), stageOfSegment(i)};
  DenseSet<Operation *> rebuilt;
  SmallVector<Operation *> work;
  auto rebuilds = [&](Value v, int64_t stage) {
    auto it = forwardAt.find(v.getDefiningOp());
    if (it != forwardAt.end() && it->second.second == stage &&
        recomputes(plan, m, it->second.first, it->first) &&
        rebuilt.insert(it->first).second)
      work.push_back(it->first);
  };
  bool whole = problem.cluster.device.recomputeWholeForward;
  for (auto [i, seg] : llvm::enumerate(m.segments))
    for (Operation *op : whole ? seg.ops : seg.backward)
      for (Value v : whole ? ValueRange(op->getResults())
                           : ValueRange(op->getOperands()))
        rebuilds(v, stageOfSegment(i));
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value v : op->getOperands())
      rebuilds(v, forwardAt.lookup(op).second);
  }
  for (Operation *op : rebuilt)
    for (Value v : op->getOperands())
      if (BlockArgument arg = parameterRoot(v))
        recomputedReads[forwardAt.lookup(op).second].insert(
            parameterName(arg));
  for (auto [i, seg] : llvm::enumerate(m.segments)) {
    int64_t s = stageOfSegment(i);
    for (const auto &name : parametersOf(seg)) {
      readBy[s].insert(name.getKey());
      firstStage.try_emplace(name.getKey(), s);
      lastStage[name.getKey()] = s;
    }
  }
  std::map<std::string, TPProfile::ParameterSplit> splits =
      parameterSplits(m, c.tp);
  bool anySharded = false;
  for (auto [j, st] : llvm::enumerate(plan.stages)) {
    int64_t stage = static_cast<int64_t>(j);
    const llvm::StringSet<> &readHere = readBy[j];
    double sharded = 0;
    if (c.tp > 1) {
      // Occurrences per step of each collective of each segment kind held
      // here: once per pass that runs it, and a forward one again under
      // full recomputation (not for the last segment; unless the device's
      // executor reruns the whole forward pass, not where a group of
      // recomputed segments ends and the backward pass reads it only
      // through the kept output, nor on a kept input).
      std::map<std::pair<unsigned, unsigned>, int64_t> count;
      std::map<std::pair<unsigned, unsigned>, bool> recomputed;
      for (auto [first, end] : st.chunks)
        for (unsigned i = first; i < end; ++i) {
          unsigned kind = m.segments[i].kind;
          const auto &cols =
              m.kinds[kind].at(c.tp).collectivesFor(c.sequenceParallel);
          for (unsigned x = 0; x < cols.size(); ++x) {
            bool again = (rebuildsSegment(plan, m, i) &&
                          cols[x].pass != TPCollective::Pass::Backward &&
                          (whole || !keepsOutput(plan, m, i) ||
                           cols[x].recomputedAtStageEnd) &&
                          !(!whole && keepsInput(plan, m, i) &&
                            cols[x].ofInput) &&
                          !cols[x].ofParameter) ||
                         (c.recompute == Recompute::Selective &&
                          cols[x].ofSelective);
            count[{kind, x}] +=
                cols[x].timesPerStep(micro) + (again ? micro : 0);
            recomputed[{kind, x}] |= again;
          }
        }
      for (auto [key, times] : count) {
        const SegmentKind &k = m.kinds[key.first];
        const TPCollective &col =
            k.at(c.tp).collectivesFor(c.sequenceParallel)[key.second];
        out.push_back({"tensor-parallel", collectiveName(col.kind),
                       stage, c.tp, col.elementsFor(mb) * w, times,
                       col.reason +
                           (col.pass == TPCollective::Pass::Both
                                ? "; mirrored in backward"
                            : col.pass == TPCollective::Pass::Backward
                                ? " (backward)"
                                : "") +
                           (recomputed[key] ? ", repeated by recomputation"
                                            : ""),
                       "in " + k.name + " (after " + col.where + ")"});
      }
    }
    if (c.dp > 1) {
      // Each parameter this stage reads, as tensor parallelism leaves it on
      // one device. Gradients of trained parameters (not buffers) are
      // reduced in f32 by the first stage that reads them; ZeRO shards a
      // parameter along a dimension the replicas divide and tensor
      // parallelism does not split, the others keep whole state and are
      // all-reduced; ZeRO-3 gathers compute copies where they are read.
      double reduced = 0, gathered = 0, again = 0;
      for (const auto &info : m.parameterInfo) {
        if (info.buffer || !readHere.contains(info.name))
          continue;
        auto split = splits.find(info.name);
        int64_t tpDim = split != splits.end() && c.tp > 1 ? split->second.dim : -1;
        double local = 1;
        bool divides = false;
        for (auto [d, size] : llvm::enumerate(info.shape)) {
          local *= static_cast<double>(size);
          divides |= static_cast<int64_t>(d) != tpDim && size >= c.dp &&
                     size % c.dp == 0;
        }
        if (tpDim >= 0)
          local /= static_cast<double>(c.tp);
        if (firstStage.lookup(info.name) == stage) {
          reduced += local;
          if (c.zeroStage >= 1 && divides)
            sharded += local;
        }
        if (divides) {
          gathered += local;
          // The backward pass reads a tied parameter in its last stage;
          // recomputation reads those of the ops it repeats.
          if ((info.readBackward && lastStage.lookup(info.name) == stage) ||
              recomputedReads[j].contains(info.name))
            again += local;
        }
      }
      // Local SGD: the replicas reduce nothing in the step (gradients, the
      // loss and batch-norm statistics stay their own); every H steps they
      // average their parameters' deltas.
      bool synchronous = c.localSteps == 1;
      if (!synchronous && reduced > 0) {
        PlannedCollective outer{
            "data-parallel",
            "all-reduce",
            stage,
            c.dp,
            reduced * 4,
            1,
            "average the replicas' parameter deltas (local SGD's outer "
            "step, f32)",
            "between steps, every " + std::to_string(c.localSteps) + " steps"};
        outer.everySteps = c.localSteps;
        out.push_back(outer);
      }
      if (synchronous && reduced - sharded > 0)
        out.push_back({"data-parallel", "all-reduce", stage, c.dp,
                       (reduced - sharded) * 4, 1,
                       c.zeroStage == 0
                           ? "sum the gradients of the replicas"
                           : "sum the gradients of parameters ZeRO cannot "
                             "shard evenly",
                       "after the last backward pass, bucketed to overlap it"});
      anySharded |= sharded > 0;
      if (sharded > 0)
        out.push_back(
            {"data-parallel",
             c.zeroStage >= 3 ? "reduce-scatter" : "reduce-scatter + all-gather",
             stage, c.dp, sharded * 4, 1,
             c.zeroStage >= 3
                 ? "each rank updates its 1/dp shard of parameters and state"
                 : "each rank updates its 1/dp shard of the optimizer state, "
                   "then shares the new parameters",
             "after the last backward pass, bucketed to overlap it"});
      if (c.zeroStage >= 3 && gathered > 0)
        out.push_back({"data-parallel", "all-gather", stage, c.dp,
                       gathered * w, micro,
                       "ZeRO-3 keeps only a 1/dp shard of the parameters",
                       "before each forward pass"});
      if (c.zeroStage >= 3 && again > 0)
        out.push_back({"data-parallel", "all-gather", stage, c.dp, again * w,
                       micro, "ZeRO-3: the parameters the backward pass (and "
                       "recomputation) reads",
                       "before each backward pass"});
      // Training batch norms over split samples use the whole batch's
      // statistics: mean and variance forward; the backward pass
      // recomputes them and sums two gradient terms. A recomputed batch
      // norm computes its statistics once more.
      double channels = 0, recomputed = 0;
      for (auto [first, end] : st.chunks)
        for (unsigned i = first; i < end; ++i)
          for (Operation *op : m.segments[i].ops)
            if (auto bn = dyn_cast<BatchNormTrainingOp>(op)) {
              double count = bn.getScale().getType().getNumElements();
              channels += count;
              if (recomputes(plan, m, i, op))
                recomputed += count;
            }
      if (synchronous && channels > 0)
        out.push_back({"data-parallel", "all-reduce", stage, c.dp,
                       channels * 4, 6 * micro,
                       "synchronized batch-norm statistics (f32)",
                       "in each training batch norm and its gradient"});
      if (synchronous && recomputed > 0)
        out.push_back({"data-parallel", "all-reduce", stage, c.dp,
                       recomputed * 4, 2 * micro,
                       "synchronized batch-norm statistics, recomputed",
                       "before the backward pass of recomputed batch norms"});
      if (synchronous && j + 1 == plan.stages.size())
        out.push_back({"data-parallel", "all-reduce", stage, c.dp, 4, 1,
                       "the step's loss: the mean over the replicas (f32)",
                       "after the last micro-batch"});
    }
    // A parameter read in several stages (tied embeddings): the later
    // stage's share of its gradient travels to the stage that sums it.
    // With tensor parallelism each rank sends its share and the receivers
    // all-gather (Megatron's scatter-gather). (An activation split by
    // tensor parallelism, or by tokens under sequence parallelism, already
    // travels as shares.)
    auto transfer = [&](double bytes, int64_t times, const std::string &why,
                        const std::string &where, bool shared) {
      out.push_back({"pipeline", "send/recv", stage, 2, bytes / c.tp, times,
                     why, where});
      if (c.tp > 1 && !shared)
        out.push_back({"tensor-parallel", "all-gather", stage, c.tp, bytes,
                       times, "the received shares of: " + why,
                       "on arrival, " + where});
    };
    for (const SharedParameter &sh : m.shared)
      if (stageOfSegment(sh.last) == stage && stageOfSegment(sh.first) != stage) {
        // A tensor-parallel split parameter's gradient is already a share.
        auto split = splits.find(sh.name);
        bool share = c.tp > 1 && split != splits.end() &&
                     split->second.how != "replicated";
        transfer(sh.elements * w, micro,
                 "gradient of the tied parameter " + sh.name + " to stage " +
                     std::to_string(stageOfSegment(sh.first)),
                 "after each backward pass", share);
      }
    // The gradient comes back as the next segment's backward pass leaves
    // it: a split one as it is, a whole one as each rank's share.
    for (auto [first, end] : st.chunks) {
      if (end >= n)
        continue;
      const TPProfile &last = m.kinds[m.segments[end - 1].kind].at(c.tp);
      const TPProfile &next = m.kinds[m.segments[end].kind].at(c.tp);
      bool sp = c.sequenceParallel;
      bool forward = (sp ? last.sequenceBoundary : last.boundary).isSplit();
      bool backward =
          (sp ? next.sequenceGradientOut : next.gradientOut).isSplit();
      double bytes = m.segments[end - 1].boundaryElements * mb * w;
      std::string where = "after segment " + std::to_string(end - 1);
      if (!m.segments[end - 1].gradientBack) {
        transfer(bytes, micro, "activations forward", where, forward);
      } else if (forward == backward) {
        transfer(bytes, 2 * micro, "activations forward, their gradients back",
                 where, forward);
      } else {
        transfer(bytes, micro, "activations forward", where, forward);
        transfer(bytes, micro, "their gradients back", where, backward);
      }
    }
  }
  // Sums over every gradient: partial on each replica under ZeRO,
  // completed once; with pipeline stages the running sum passes from stage
  // to stage in parameter order and the last one sends back what the
  // updates need (the clipping factor, f32; whether no gradient
  // overflowed, a bool). A norm only reported stays in the last stage.
  int64_t stages = c.pp * std::max<int64_t>(c.chunks, 1);
  bool clip = problem.clipNorm;
  for (auto [used, what, back] :
       {std::tuple(clip || problem.gradNorm,
                   clip ? "the clipping norm" : "the gradient norm",
                   clip ? 4.0 : 0.0),
        std::tuple(problem.lossScaling, "the loss-scaling overflow probe",
                   1.0)}) {
    if (!used)
      continue;
    // A tensor-parallel split gradient's sum is each rank's share,
    // completed on its own before it joins the whole ones.
    if (c.tp > 1) {
      std::map<int64_t, int64_t> splitHere;
      for (auto &[name, split] : splits)
        if (split.how != "replicated" && firstStage.count(name))
          ++splitHere[firstStage[name]];
      for (auto [stage, count] : splitHere)
        out.push_back({"tensor-parallel", "all-reduce", stage, c.tp, 4, count,
                       std::string(what) +
                           " over each tensor-parallel split gradient (f32)",
                       "after the gradient reduction"});
    }
    if (anySharded)
      out.push_back({"data-parallel", "all-reduce", 0, c.dp, 4, 1,
                     std::string(what) + " over sharded gradients (f32)",
                     "after the gradient reduction"});
    if (stages > 1) {
      out.push_back({"pipeline", "send/recv", 0, 2, 4, stages - 1,
                     std::string(what) + ": the running sum (f32)",
                     "after the gradient reduction"});
      if (back > 0)
        out.push_back({"pipeline", "send/recv", c.pp - 1, 2, back, c.pp - 1,
                       std::string(what) + ": the result, to the other stages",
                       "before the update"});
    }
  }
  return out;
}

/// A configuration's choices, as the report names them (also the names of
/// the `--ober-plan` pins, with `_` for `-`).
static json::Object configJSON(const PlanConfig &c) {
  json::Object o{{"tp", c.tp},
                 {"pp", c.pp},
                 {"dp", c.dp},
                 {"micro_batch", c.microBatch},
                 {"num_micro_batches", c.numMicroBatches},
                 {"schedule", stringifySchedule(c.schedule)},
                 {"chunks", c.chunks},
                 {"recompute", stringifyRecompute(c.recompute)},
                 {"recompute_every", c.recomputeEvery},
                 {"recompute_groups", c.recomputeGroups},
                 {"sequence_parallel", c.sequenceParallel},
                 {"zero_stage", c.zeroStage}};
  if (c.localSteps > 1)
    o["local_steps"] = c.localSteps;
  return o;
}

json::Object mlir::ober::planning::reportJSON(
    const PlanProblem &problem, const PlanEstimate &plan,
    ArrayRef<PlanEstimate> alternatives, double planSeconds,
    int64_t evaluated) {
  const PlanConfig &c = plan.config;
  const ModelProfile &m = *problem.profile;
  double model = perGPU(problem, plan, plan.modelFlops);
  json::Array stages;
  for (const StageEstimate &st : plan.stages) {
    json::Array chunks;
    for (auto [first, end] : st.chunks)
      chunks.push_back(json::Array{first, end});
    stages.push_back(json::Object{
        {"segments", std::move(chunks)},
        {"forward_s", st.forward},
        {"backward_s", st.backward},
        {"micro_batches_in_flight", st.inFlight},
        {"parameters", st.parameterElements},
        {"memory_bytes",
         json::Object{{"parameters", st.memory.parameters},
                      {"gradients", st.memory.gradients},
                      {"optimizer", st.memory.optimizer},
                      {"activations", st.memory.activations},
                      {"working", st.memory.working},
                      {"update", st.memory.update},
                      {"total", st.memory.total()}}}});
  }
  auto listJSON = [](const std::vector<PlannedCollective> &list) {
    json::Array out;
    for (const PlannedCollective &col : list) {
      json::Object o{{"scope", col.scope},   {"kind", col.kind},
                     {"stage", col.stage},   {"group_size", col.groupSize},
                     {"bytes", col.bytes},   {"per_step", col.perStep},
                     {"reason", col.reason}, {"where", col.where}};
      if (col.everySteps > 1)
        o["every_steps"] = col.everySteps;
      out.push_back(std::move(o));
    }
    return out;
  };
  json::Array collectives = listJSON(plannedCollectives(problem, plan));
  json::Array kinds;
  for (auto [i, k] : llvm::enumerate(m.kinds))
    kinds.push_back(json::Object{
        {"name", k.name},
        {"count", k.count},
        {"activation_bytes_per_micro_batch", plan.kindActivationBytes[i]}});
  json::Array others;
  for (const PlanEstimate &alt : alternatives) {
    json::Object o = configJSON(alt.config);
    o["step_time_s"] = alt.stepTime;
    others.push_back(std::move(o));
  }
  json::Object report{
      {"cluster", problem.cluster.name},
      {"gpus", problem.cluster.numDevices()},
      {"global_batch", problem.globalBatch},
      {"precision", problem.precision},
      {"step_time_s", plan.stepTime},
      {"model_tflops_per_gpu", model},
      {"hardware_tflops_per_gpu", perGPU(problem, plan, plan.hardwareFlops)},
      {"mfu", model * 1e12 / peakOf(problem)},
      {"peak_memory_bytes", plan.peakMemory},
      {"peak_memory_stage", plan.peakStage},
      {"memory_limit_bytes", problem.memoryLimit},
      {"plan_time_s", planSeconds},
      {"plans_evaluated", evaluated},
      {"model_flops_per_step", plan.modelFlops},
      {"hardware_flops_per_step", plan.hardwareFlops},
      {"breakdown",
       json::Object{{"compute_s", plan.compute},
                    {"exposed_communication_s", plan.exposedComm},
                    {"bubble_s", plan.bubble},
                    {"optimizer_s", plan.optimizer},
                    {"tensor_parallel_communication_s", plan.tpComm},
                    {"pipeline_communication_s", plan.p2pComm},
                    {"data_parallel_communication_s", plan.dpComm},
                    {"data_parallel_exposed_s", plan.dpCommExposed}}},
      {"segments", static_cast<int64_t>(m.segments.size())},
      {"collectives", std::move(collectives)},
      {"segment_kinds", std::move(kinds)},
      {"stages", std::move(stages)},
      {"alternatives", std::move(others)}};
  for (auto &[key, value] : configJSON(c))
    report[key] = std::move(value);
  return report;
}

void mlir::ober::planning::printPlanTable(const PlanProblem &problem,
                                          const PlanEstimate &plan,
                                          raw_ostream &os) {
  const PlanConfig &c = plan.config;
  double model = perGPU(problem, plan, plan.modelFlops);
  os << "ober plan for " << problem.cluster.numDevices() << " x "
     << problem.cluster.device.name << " (" << problem.cluster.name
     << "), global batch " << problem.globalBatch << ", " << problem.precision
     << "\n";
  os << llvm::format("  tp %lld  pp %lld  dp %lld  micro-batch %lld x %lld  "
                     "schedule %s",
                     (long long)c.tp, (long long)c.pp, (long long)c.dp,
                     (long long)c.microBatch, (long long)c.numMicroBatches,
                     stringifySchedule(c.schedule).str().c_str());
  if (c.schedule == Schedule::Interleaved)
    os << " (" << c.chunks << " chunks)";
  os << "\n  recompute " << describeRecompute(c);
  os
     << "  sequence-parallel " << (c.sequenceParallel ? "on" : "off")
     << "  zero " << c.zeroStage;
  if (c.localSteps > 1)
    os << "  local SGD: " << c.localSteps << " steps between averages";
  os << "\n";
  os << llvm::format("  step %.4g s   model %.1f TFLOP/s/GPU   hardware %.1f "
                     "TFLOP/s/GPU   MFU %.1f%%\n",
                     plan.stepTime, model,
                     perGPU(problem, plan, plan.hardwareFlops),
                     100 * model * 1e12 / peakOf(problem));
  os << llvm::format("  compute %.4g s  exposed comm %.4g s  bubble %.4g s  "
                     "optimizer %.4g s\n",
                     plan.compute, plan.exposedComm, plan.bubble,
                     plan.optimizer);
  os << "  stage  segments        fwd/mb      bwd/mb    in-flight  params     "
        "grads      optim      activ      work       total\n";
  for (auto [j, st] : llvm::enumerate(plan.stages)) {
    std::string segs;
    for (auto [first, end] : st.chunks)
      segs += (segs.empty() ? "" : ",") + std::to_string(first) + "-" +
              std::to_string(end - 1);
    const StageMemory &mem = st.memory;
    os << llvm::format("  %5zu  %-14s %9.3g s %9.3g s %9lld  ", j,
                       segs.c_str(), st.forward, st.backward,
                       (long long)st.inFlight);
    for (double b : {mem.parameters, mem.gradients, mem.optimizer,
                     mem.activations, mem.working, mem.total()})
      os << llvm::format("%-11s", formatBytes(b).c_str());
    os << "\n";
  }
  os << "  peak " << formatBytes(plan.peakMemory) << " of " << formatBytes(problem.memoryLimit)
     << " (stage " << plan.peakStage << ")\n";
}

void mlir::ober::planning::printPlanExplain(const PlanProblem &problem,
                                            const PlanEstimate &plan,
                                            raw_ostream &os) {
  const PlanConfig &c = plan.config;
  const ModelProfile &m = *problem.profile;
  os << "segment kinds (per micro-batch, at tp=" << c.tp << "):\n";
  for (auto [i, k] : llvm::enumerate(m.kinds)) {
    PlanConfig one = c;
    unsigned index = 0;
    while (m.segments[index].kind != i)
      ++index;
    os << llvm::format("  %3zu x %-28s %9.3g s", (size_t)k.count,
                       k.name.c_str(), segmentSeconds(problem, one, index))
       << "  saved " << formatBytes(plan.kindActivationBytes[i]) << "\n";
  }
  os << "collectives (bytes of the full buffer x times per step, on each "
        "device of the stage):\n";
  std::map<std::string, double> total;
  for (const PlannedCollective &col : plannedCollectives(problem, plan)) {
    os << "  stage " << col.stage << ": " << col.scope << " " << col.kind
       << " over " << col.groupSize << " ranks, " << formatBytes(col.bytes)
       << " x " << col.perStep
       << (col.everySteps > 1
               ? " every " + std::to_string(col.everySteps) + " steps"
               : std::string())
       << ", " << col.where << ": " << col.reason << "\n";
    total[col.kind] += col.bytes * col.perStep / col.everySteps;
  }
  os << "  per step:";
  for (auto &[kind, bytes] : total)
    os << " " << kind << " " << formatBytes(bytes);
  os << "\n";
}
