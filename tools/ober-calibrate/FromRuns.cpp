//===- FromRuns.cpp - ober-calibrate --from-runs --------------------------===//
//
// Part of Ober-Train. Builds each model of the runs (a GPT of the run's
// sizes), plans each run with its configuration pinned, fits the device
// figures to the runs' measured step times, and reports the fit per model.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "ober/Importers/Generators/GPT.h"
#include "ober/Planning/Calibration.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::planning;

namespace {
/// A model of the runs: sizes, and the padded vocabulary of its tensor-
/// parallel degree.
using ModelKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

struct BuiltModel {
  OwningOpRef<ModuleOp> module;
  std::vector<int64_t> degrees;
  ModelProfile profile;
};

int64_t paddedVocabulary(const calibrate::FromRunsOptions &o, int64_t tp) {
  int64_t m = o.vocabularyMultiple * tp;
  return (o.vocabulary + m - 1) / m * m;
}

/// The model of the runs of `key`.
GPTConfig gptConfig(const ModelKey &key, const calibrate::FromRunsOptions &o) {
  auto [hidden, heads, layers, seq, vocab] = key;
  GPTConfig g;
  g.layers = layers;
  g.hidden = hidden;
  g.heads = heads;
  g.seq = seq;
  g.vocab = vocab;
  g.dtype = o.precision;
  g.dropout = o.dropout;
  return g;
}

FailureOr<BuiltModel> buildModel(MLIRContext &context, const ModelKey &key,
                                 const calibrate::FromRunsOptions &o,
                                 ArrayRef<int64_t> degrees) {
  BuiltModel b;
  b.module = buildGPT(context, gptConfig(key, o));
  if (!b.module)
    return failure();
  PassManager pm(&context);
  std::string error;
  llvm::raw_string_ostream os(error);
  if (failed(parsePassPipeline("ober-build-train-step{optimizer=" +
                                   o.optimizer + "}",
                               pm, os))) {
    llvm::errs() << "error: --optimizer=" << o.optimizer << ": " << error
                 << "\n";
    return failure();
  }
  if (failed(pm.run(*b.module)))
    return failure();
  b.degrees.assign(degrees.begin(), degrees.end());
  return b;
}

std::string describe(const MeasuredRun &r) {
  return llvm::formatv("h{0} l{1} t{2} p{3} d{4} mb{5} gb{6}", r.hidden,
                       r.layers, r.tp, r.pp, r.dp, r.microBatch,
                       r.globalBatch)
      .str();
}
/// Profiles every model with `cluster`'s figures and plans every run with
/// its configuration pinned.
LogicalResult priceRuns(ArrayRef<MeasuredRun> runs,
                        const calibrate::FromRunsOptions &o,
                        const Cluster &cluster,
                        std::map<ModelKey, BuiltModel> &models,
                        std::vector<FitCase> &cases, unsigned &notFitting) {
  std::string error;
  // One problem per model and device count; each run pinned.
  std::map<std::pair<ModelKey, int64_t>, std::shared_ptr<PlanProblem>> problems;
  cases.clear();
  notFitting = 0;
  for (auto &[key, model] : models) {
    FailureOr<ModelProfile> p = profileTrainStep(*model.module, cluster,
                                                 o.precision, model.degrees);
    if (failed(p))
      return failure();
    model.profile = std::move(*p);
  }
  for (auto [i, r] : llvm::enumerate(runs)) {
    ModelKey key{r.hidden, r.heads, r.layers, r.sequence,
                 paddedVocabulary(o, r.tp)};
    std::shared_ptr<PlanProblem> &problem = problems[{key, r.gpus}];
    if (!problem) {
      problem = std::make_shared<PlanProblem>();
      problem->profile = &models.at(key).profile;
      problem->cluster = cluster;
      problem->precision = o.precision;
      problem->memoryLimit = cluster.device.memoryBytes;
      if (failed(resizeCluster(problem->cluster, r.gpus, std::nullopt,
                               error))) {
        llvm::errs() << "error: " << o.runs << ":" << r.line << ": " << error
                     << "\n";
        return failure();
      }
    }
    problem->globalBatch = r.globalBatch;
    PlanPins pins;
    pins.tp = r.tp;
    pins.pp = r.pp;
    pins.dp = r.dp;
    pins.microBatch = r.microBatch;
    pins.schedule = Schedule::OneFOneB;
    pins.recompute = Recompute::Full;
    pins.sequenceParallel = false;
    pins.zeroStage = 0;
    pins.uniformStages = o.uniformStages;
    FailureOr<SearchResult> found = search(*problem, pins, error);
    if (failed(found)) {
      llvm::errs() << "error: " << o.runs << ":" << r.line << " ("
                   << describe(r) << "): " << error << "\n";
      return failure();
    }
    const PlanEstimate &plan = found->found ? found->best : found->leanest;
    notFitting += !found->found;
    FitCase fc;
    fc.problem = problem;
    fc.config = plan.config;
    fc.starts = plan.starts;
    fc.run = &r;
    fc.heldOut = o.holdoutEvery && i % o.holdoutEvery == 0;
    cases.push_back(std::move(fc));
  }
  // The fit prices time only: memory is checked above.
  for (auto &[key, problem] : problems)
    problem->memoryLimit = HUGE_VAL;
  predictCases(cases);
  return success();
}
} // namespace

LogicalResult
mlir::ober::calibrate::fitToRuns(MLIRContext &context, Cluster &cluster,
                                 const FromRunsOptions &o) {
  auto buffer = llvm::MemoryBuffer::getFile(o.runs);
  if (!buffer) {
    llvm::errs() << "error: cannot read --from-runs file '" << o.runs
                 << "': " << buffer.getError().message() << "\n";
    return failure();
  }
  std::string error;
  std::optional<std::vector<MeasuredRun>> runs =
      readRuns((*buffer)->getBuffer(), o.runs, error);
  if (!runs) {
    llvm::errs() << "error: " << error << "\n";
    return failure();
  }
  GPTConfig defaults;
  defaults.dropout = o.dropout;
  if (!checkGPTConfig(defaults, error)) {
    llvm::errs() << "error: --dropout: " << error << "\n";
    return failure();
  }
  // Every model once, profiled for the degrees its runs use.
  std::map<ModelKey, std::vector<int64_t>> degrees;
  for (const MeasuredRun &r : *runs) {
    ModelKey key{r.hidden, r.heads, r.layers, r.sequence,
                 paddedVocabulary(o, r.tp)};
    if (!checkGPTConfig(gptConfig(key, o), error)) {
      llvm::errs() << "error: " << o.runs << ":" << r.line << ": " << error
                   << "\n";
      return failure();
    }
    std::vector<int64_t> &d = degrees[key];
    if (!llvm::is_contained(d, r.tp))
      d.push_back(r.tp);
  }
  std::map<ModelKey, BuiltModel> models;
  for (auto &[key, d] : degrees) {
    llvm::sort(d);
    FailureOr<BuiltModel> b = buildModel(context, key, o, d);
    if (failed(b))
      return failure();
    models.emplace(key, std::move(*b));
  }
  // The runs are planned with full recomputation (Megatron's columns say
  // nothing else), priced as the cluster says its executor runs it.
  if (!cluster.device.recomputeWholeForward)
    llvm::errs() << "note: full recomputation is priced as this project "
                    "runs it (rebuilding only what the backward pass reads); "
                    "for runs of Megatron-LM, which reruns whole layers, "
                    "start from a cluster with \"full_recompute\": "
                    "\"forward\" (utils/bench/a100-80gb-megatron.json)\n";
  // The profiles price ops with the cluster's figures: fit, profile
  // again with the fitted figures, fit again; the report's predictions
  // come from profiles of the final cluster, as ober-opt's would.
  std::vector<FitCase> cases;
  unsigned notFitting = 0;
  if (failed(priceRuns(*runs, o, cluster, models, cases, notFitting)))
    return failure();
  FitError before = fitError(cases);
  llvm::errs() << llvm::format(
      "%zu runs of %zu models; before fitting: mean error %.3f, largest %.3f\n",
      cases.size(), models.size(), before.mean, before.max);
  std::vector<FitParameter> fitted =
      fitDevice(cluster, cases, o.fitNorm, &llvm::errs());
  if (failed(priceRuns(*runs, o, cluster, models, cases, notFitting)))
    return failure();
  fitted = fitDevice(cluster, cases, o.fitNorm, &llvm::errs());
  if (failed(priceRuns(*runs, o, cluster, models, cases, notFitting)))
    return failure();
  // Per model: errors and how well the configurations rank.
  llvm::outs() << llvm::format("%-22s %5s %9s %8s %7s %9s\n", "model", "runs",
                               "mean err", "max err", "bias", "rank corr");
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, std::vector<size_t>>
      byModel;
  for (auto [i, c] : llvm::enumerate(cases))
    byModel[{c.run->hidden, c.run->heads, c.run->layers, c.run->sequence}]
        .push_back(i);
  double worstRank = 1;
  for (auto &[key, idx] : byModel) {
    std::vector<double> predicted, measured;
    double sum = 0, max = 0, bias = 0;
    for (size_t i : idx) {
      double ratio = cases[i].predicted / cases[i].run->seconds;
      predicted.push_back(cases[i].predicted);
      measured.push_back(cases[i].run->seconds);
      sum += std::fabs(ratio - 1);
      max = std::max(max, std::fabs(ratio - 1));
      bias += ratio - 1;
    }
    double rho = rankCorrelation(predicted, measured);
    worstRank = std::min(worstRank, rho);
    auto [h, a, l, s] = key;
    llvm::outs() << llvm::format(
        "%-22s %5zu %9.3f %8.3f %+7.3f %9.3f\n",
        llvm::formatv("h{0} a{1} l{2} s{3}", h, a, l, s).str().c_str(),
        idx.size(), sum / idx.size(), max, bias / idx.size(), rho);
  }
  FitError all = fitError(cases), train = fitError(cases, false),
           held = fitError(cases, true);
  llvm::outs() << llvm::format("fitted runs: mean error %.3f, largest %.3f "
                               "(%zu runs)\n",
                               train.mean, train.max, train.count);
  if (held.count)
    llvm::outs() << llvm::format("held-out runs: mean error %.3f, largest "
                                 "%.3f (%zu runs, every %u-th)\n",
                                 held.mean, held.max, held.count,
                                 o.holdoutEvery);
  llvm::outs() << llvm::format("all runs: mean error %.3f, largest %.3f; "
                               "lowest rank correlation of a model %.3f\n",
                               all.mean, all.max, worstRank);
  if (notFitting)
    llvm::outs() << notFitting
                 << " run(s) ran but the memory model says they do not fit\n";
  llvm::outs() << "fitted:";
  for (const FitParameter &p : fitted)
    llvm::outs() << " " << p.name << "=" << llvm::format("%.4g", p.value);
  llvm::outs() << "\n";
  if (!o.predictions.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(o.predictions, ec);
    if (ec) {
      llvm::errs() << "error: cannot write --predictions file '"
                   << o.predictions << "': " << ec.message() << "\n";
      return failure();
    }
    os << "line,gpus,global_batch,micro_batch,hidden,heads,layers,sequence,"
          "tp,dp,pp,measured_ms,predicted_ms,held_out\n";
    for (const FitCase &c : cases) {
      const MeasuredRun &r = *c.run;
      os << r.line << "," << r.gpus << "," << r.globalBatch << ","
         << r.microBatch << "," << r.hidden << "," << r.heads << ","
         << r.layers << "," << r.sequence << "," << r.tp << "," << r.dp
         << "," << r.pp << "," << llvm::format("%.4f", r.seconds * 1e3)
         << "," << llvm::format("%.4f", c.predicted * 1e3) << ","
         << (c.heldOut ? 1 : 0) << "\n";
    }
  }
  return success();
}
