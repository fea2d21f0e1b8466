//===- PlanPass.cpp - --ober-plan ------------------------------------------===//
//
// Part of Ober-Train. Options in, annotations and a report out; the work is
// in ModelProfile (what the step is), PlanModel (what a plan costs) and
// PlanSearch (which plan). The report's collectives are the cost model's:
// what the partitioned program moves (test/python/plan_sweep_test.py).
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Planning/Passes.h"
#include "ober/Planning/Plan.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace mlir::ober {
#define GEN_PASS_DEF_PLANPASS
#include "ober/Planning/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober::planning;

static llvm::cl::list<std::string> planReport(
    "ober-plan-report",
    llvm::cl::desc("Write the plan of --ober-plan here: a page to look at "
                   "for a name ending in .html, else JSON (several files: "
                   "repeat the option or separate them with commas)"),
    llvm::cl::value_desc("file"), llvm::cl::CommaSeparated);
static llvm::cl::opt<bool> planExplain(
    "ober-plan-explain",
    llvm::cl::desc("List each collective the plan of --ober-plan inserts, "
                   "and why (stderr)"),
    llvm::cl::init(false));

namespace {
/// An integer option the user set (nullopt when unset); set, it must be
/// positive: `gpus=0` is a mistake, not "the default".
LogicalResult positiveOption(const Pass::Option<int64_t> &v, StringRef name,
                             std::optional<int64_t> &slot, std::string &error) {
  if (!v.hasValue())
    return success();
  if (v < 1) {
    error = name.str() + "=" + std::to_string(v) + " must be a positive number";
    return failure();
  }
  slot = v;
  return success();
}

struct PlanPass : mlir::ober::impl::PlanPassBase<PlanPass> {
  using PlanPassBase::PlanPassBase;

  LogicalResult pins(PlanPins &out, std::string &error) {
    auto positive = [&](const Option<int64_t> &v, const char *name,
                        std::optional<int64_t> &slot) {
      return succeeded(positiveOption(v, name, slot, error));
    };
    if (!positive(tp, "tp", out.tp) || !positive(pp, "pp", out.pp) ||
        !positive(dp, "dp", out.dp) ||
        !positive(microBatch, "micro-batch", out.microBatch) ||
        !positive(chunks, "chunks", out.chunks) ||
        !positive(recomputeEvery, "recompute-every", out.recomputeEvery))
      return failure();
    if (!schedule.empty()) {
      out.schedule = parseSchedule(schedule);
      if (!out.schedule) {
        error = "schedule='" + schedule + "' is not one of " +
                enumNames<Schedule>(ober::stringifySchedule,
                                    ober::getMaxEnumValForSchedule);
        return failure();
      }
    }
    if (out.chunks && out.schedule && *out.schedule == Schedule::Interleaved &&
        *out.chunks < 2) {
      error = "chunks=" + std::to_string(*out.chunks) +
              ": interleaved-1f1b needs at least 2 chunks per device";
      return failure();
    }
    if (out.chunks && out.schedule && *out.schedule != Schedule::Interleaved &&
        *out.chunks != 1) {
      error = "chunks=" + std::to_string(*out.chunks) +
              " needs schedule=interleaved-1f1b";
      return failure();
    }
    if (!recompute.empty()) {
      out.recompute = ober::symbolizeRecompute(recompute);
      if (!out.recompute) {
        error = "recompute='" + recompute + "' is not one of " +
                enumNames<Recompute>(ober::stringifyRecompute,
                                     ober::getMaxEnumValForRecompute);
        return failure();
      }
    }
    if (recomputeGroups.hasValue()) {
      if (recomputeGroups < 0) {
        error = "recompute-groups=" + std::to_string(recomputeGroups) +
                " must be 0 (every group) or more";
        return failure();
      }
      out.recomputeGroups = recomputeGroups;
    }
    if (partition == "uniform") {
      out.uniformStages = true;
    } else if (!partition.empty() && partition != "balanced") {
      error = "partition='" + partition + "' is not one of balanced, uniform";
      return failure();
    }
    if (sequenceParallel != -1) {
      if (sequenceParallel != 0 && sequenceParallel != 1) {
        error = "sequence-parallel=" + std::to_string(sequenceParallel) +
                " must be 0 or 1";
        return failure();
      }
      out.sequenceParallel = sequenceParallel == 1;
    }
    if (zero != -1) {
      if (zero < 0 || zero > 3) {
        error = "zero=" + std::to_string(zero) + " must be 0, 1, 2 or 3";
        return failure();
      }
      out.zeroStage = static_cast<int>(zero);
    }
    if (localSteps < 0) {
      error =
          "local-steps=" + std::to_string(localSteps) + " must be at least 1";
      return failure();
    }
    if (localSteps > 0)
      out.localSteps = localSteps;
    return success();
  }

  void annotate(const PlanProblem &problem, const PlanEstimate &plan);

  void runOnOperation() override {
    auto start = std::chrono::steady_clock::now();
    ModuleOp module = getOperation();
    std::string error;
    auto fail = [&](const std::string &msg) {
      mlir::emitError(module.getLoc(), "--ober-plan: ") << msg;
      signalPassFailure();
    };
    // gpus= and nodes= are checked where the cluster is read.
    std::optional<int64_t> batch;
    if (failed(positiveOption(globalBatch, "global-batch", batch, error)))
      return fail(error);
    std::optional<Cluster> c =
        loadCluster(cluster, givenCount(gpus), givenCount(nodes), error);
    if (!c)
      return fail(error);
    if (failed(setLowering(*c, attention, attentionBlock, convolutions,
                           error)))
      return fail(error);
    PlanPins pinned;
    if (failed(pins(pinned, error)))
      return fail(error);
    std::string prec = precision;
    if (prec == "auto") {
      const auto &peaks = c->device.peakFlops;
      auto bf16 = peaks.find("bf16"), f32 = peaks.find("f32");
      prec = bf16 != peaks.end() &&
                     (f32 == peaks.end() || bf16->second > f32->second)
                 ? "bf16"
                 : "f32";
    }
    if (!ober::symbolizePrecision(prec))
      return fail("precision='" + prec + "' is not one of auto, " +
                  enumNames<ober::Precision>(ober::stringifyPrecision,
                                             ober::getMaxEnumValForPrecision));
    if (!c->device.peakFlops.count(prec))
      module.emitWarning("--ober-plan: precision=")
          << prec << ": the cluster's device lists no peak_flops." << prec
          << "; its matrix products are priced at the "
          << (c->device.peakFlops.count("f32") ? "f32" : "first listed")
          << " rate";
    if (!(memoryFraction > 0 && memoryFraction <= 1))
      return fail("memory-fraction=" + std::to_string(memoryFraction) +
                  " is not in (0, 1]");
    FailureOr<ModelProfile> profile = profileTrainStep(
        module, *c, prec, candidateDegrees(*c, c->numDevices(), pinned));
    if (failed(profile))
      return signalPassFailure();
    PlanProblem problem;
    problem.profile = &*profile;
    problem.cluster = *c;
    problem.precision = prec;
    for (auto f : module.getOps<func::FuncOp>())
      if (auto built = f->getAttrOfType<DictionaryAttr>("ober.train_step")) {
        auto clip = built.getAs<FloatAttr>("clip_norm");
        auto norm = built.getAs<BoolAttr>("grad_norm");
        auto scaling = built.getAs<StringAttr>("loss_scale");
        problem.clipNorm = clip && clip.getValueAsDouble() > 0;
        problem.gradNorm = norm && norm.getValue();
        problem.lossScaling = scaling && scaling.getValue() == "dynamic";
      }
    problem.memoryLimit = c->device.memoryBytes * memoryFraction;
    if (batch) {
      problem.globalBatch = *batch;
    } else {
      auto step = module.lookupSymbol<func::FuncOp>("train_step");
      int64_t micro = 1;
      if (step)
        if (auto attr = step->getAttrOfType<DictionaryAttr>("ober.train_step"))
          if (auto m = attr.getAs<IntegerAttr>("micro_batches"))
            micro = m.getInt();
      problem.globalBatch = profile->irBatch * micro;
    }
    FailureOr<SearchResult> found = search(problem, pinned, error);
    if (failed(found))
      return fail(error);
    if (!found->found) {
      const PlanEstimate &lean = found->leanest;
      const StageMemory &m = lean.stages[lean.peakStage].memory;
      std::string msg;
      llvm::raw_string_ostream os(msg);
      os << "no plan fits in " << formatBytes(problem.memoryLimit)
         << " per device: the leanest of " << found->evaluated
         << " plans (tp=" << lean.config.tp << " pp=" << lean.config.pp
         << " dp=" << lean.config.dp << " micro-batch="
         << lean.config.microBatch << " recompute="
         << stringifyRecompute(lean.config.recompute)
         << " zero=" << lean.config.zeroStage << ") needs "
         << formatBytes(lean.peakMemory) << " on pipeline stage "
         << lean.peakStage << " (parameters " << formatBytes(m.parameters)
         << ", gradients " << formatBytes(m.gradients) << ", optimizer "
         << formatBytes(m.optimizer) << ", activations "
         << formatBytes(m.activations) << ", working "
         << formatBytes(m.working)
         << "); use more devices or pin fewer choices";
      return fail(msg);
    }
    const PlanEstimate &plan = found->best;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    annotate(problem, plan);
    printPlanTable(problem, plan, llvm::errs());
    llvm::errs() << llvm::format("  planned in %.3f s (%lld plans)\n", seconds,
                                 (long long)found->evaluated);
    if (planExplain)
      printPlanExplain(problem, plan, llvm::errs());
    ArrayRef<PlanEstimate> alternatives = ArrayRef(found->ranked).drop_front();
    for (const std::string &file : planReport) {
      std::error_code ec;
      llvm::raw_fd_ostream out(file, ec, llvm::sys::fs::OF_Text);
      if (ec)
        return fail("cannot write the plan report '" + file +
                    "': " + ec.message());
      if (StringRef(file).ends_with_insensitive(".html"))
        writePlanHTML(problem, plan, alternatives, seconds, found->evaluated,
                      out);
      else
        out << llvm::formatv("{0:2}\n",
                             llvm::json::Value(reportJSON(
                                 problem, plan, alternatives, seconds,
                                 found->evaluated)));
    }
  }
};

void PlanPass::annotate(const PlanProblem &problem, const PlanEstimate &plan) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  Builder b(ctx);
  const PlanConfig &c = plan.config;
  const ModelProfile &m = *problem.profile;
  module->setAttr("ober.cluster", problem.cluster.toAttr(ctx));
  module->setAttr("ober.plan",
                  ober::PlanAttr::get(
                      ctx, c.tp, c.pp, c.dp, c.microBatch, c.numMicroBatches,
                      problem.globalBatch, c.schedule, c.chunks, c.recompute,
                      c.sequenceParallel, c.zeroStage,
                      *ober::symbolizePrecision(problem.precision), m.function,
                      c.localSteps));
  auto grad = module.lookupSymbol<func::FuncOp>(m.function);
  // Segment -> (stage, chunk).
  std::vector<std::pair<int64_t, int64_t>> where(m.segments.size());
  for (auto [j, st] : llvm::enumerate(plan.stages))
    for (auto [chunk, range] : llvm::enumerate(st.chunks))
      for (unsigned i = range.first; i < range.second; ++i)
        where[i] = {static_cast<int64_t>(j), static_cast<int64_t>(chunk)};
  std::map<std::string, TPProfile::ParameterSplit> splits =
      parameterSplits(m, c.tp);
  for (auto [i, seg] : llvm::enumerate(m.segments)) {
    for (Operation *op : seg.ops) {
      op->setAttr("ober.stage", b.getI64IntegerAttr(where[i].first));
      if (c.pp > 1 && c.chunks > 1)
        op->setAttr("ober.chunk", b.getI64IntegerAttr(where[i].second));
      if (recomputes(plan, m, i, op))
        op->setAttr("ober.recompute", b.getUnitAttr());
      // A parameter, possibly through reshapes, transposes and casts.
      for (Value v : op->getOperands()) {
        BlockArgument arg = parameterRoot(v);
        if (!arg || arg.getOwner() != &grad.getBody().front())
          continue;
        auto name = grad.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "ober.param");
        if (!name)
          continue;
        unsigned n = arg.getArgNumber();
        if (!grad.getArgAttr(n, "ober.stage"))
          grad.setArgAttr(n, "ober.stage", b.getI64IntegerAttr(where[i].first));
        auto it = splits.find(name.getValue().str());
        if (!grad.getArgAttr(n, "ober.sharding")) {
          bool split = it != splits.end() && it->second.how != "replicated";
          grad.setArgAttr(n, "ober.sharding",
                          b.getStringAttr(split ? it->second.how : "replicated"));
          // The dimension tensor parallelism splits (of the stored value).
          if (split && it->second.dim >= 0)
            grad.setArgAttr(n, "ober.tp_dim",
                            b.getI64IntegerAttr(it->second.dim));
        }
      }
    }
  }
}
} // namespace
