//===- ober-calibrate.cpp - measure a machine, or fit to measured steps ---===//
//
// Part of Ober-Train. Writes a cluster JSON the planner reads
// (`--ober-plan=cluster=FILE`):
//
//   ober-calibrate -o cpu.json
//       measures this machine's cores (GEMMs through the executables' kernel
//       library, memory bandwidth by size, kernel launch time, collectives
//       through the runtime with threads as devices);
//   ober-calibrate --from-runs runs.csv --cluster a100-80gb -o fitted.json
//       fits the cluster's device figures to measured training steps.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "ober/InitAll.h"
#include "ober/Tools/Diagnostics.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ober;
namespace cl = llvm::cl;

static cl::OptionCategory category("ober-calibrate options");
static cl::opt<std::string> output("o", cl::desc("Write the cluster JSON here"),
                                   cl::value_desc("file"), cl::Required,
                                   cl::cat(category));
static cl::opt<std::string>
    clusterName("cluster",
                cl::desc("The cluster to start from: a preset (a100-40gb, "
                         "a100-80gb, h100-sxm, h200-sxm, max-1550, cpu) or a "
                         "JSON file (default: cpu, this machine)"),
                cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> fromRuns(
    "from-runs",
    cl::desc("Fit the cluster's device figures to the measured training "
             "steps in this CSV (columns as vTrain's ground truth: # GPUs, "
             "global batch, micro batch, hidden size, attention heads, "
             "# layers, sequence length, tensor/data/pipeline parallelism, "
             "iteration time (ms))"),
    cl::value_desc("csv"), cl::cat(category));
static cl::opt<std::string>
    precision("precision",
              cl::desc("--from-runs: the precision the runs trained in (f16, "
                       "bf16, f32)"),
              cl::init("f16"), cl::cat(category));
static cl::opt<std::string>
    optimizer("optimizer", cl::desc("--from-runs: adam, adamw or sgd"),
              cl::init("adam"), cl::cat(category));
static cl::opt<double> dropout("dropout",
                               cl::desc("--from-runs: the models' dropout"),
                               cl::init(0.1), cl::cat(category));
static cl::opt<int64_t>
    vocabulary("vocabulary",
               cl::desc("--from-runs: vocabulary before padding (GPT-2's)"),
               cl::init(50257), cl::cat(category));
static cl::opt<int64_t> vocabularyMultiple(
    "vocabulary-multiple",
    cl::desc("--from-runs: the vocabulary is padded to a multiple of this "
             "times the tensor-parallel size (Megatron's 128)"),
    cl::init(128), cl::cat(category));
static cl::opt<std::string> partition(
    "partition",
    cl::desc("--from-runs: how the runs' pipelines placed layers: uniform "
             "(as many per stage, Megatron's) or balanced (the planner's)"),
    cl::init("uniform"), cl::cat(category));
static cl::opt<unsigned> holdoutEvery(
    "holdout-every",
    cl::desc("--from-runs: leave every k-th run out of the fit and report "
             "the error on those apart (0: fit to all)"),
    cl::init(0), cl::cat(category));
static cl::opt<double> fitNorm(
    "fit-norm",
    cl::desc("--from-runs: minimise the p-norm of the relative errors, "
             "(mean |error|^p)^(1/p): 1 the mean error, larger p weighs the "
             "worst runs more (from 1 to 16)"),
    cl::init(planning::kDefaultFitNorm), cl::cat(category));
static cl::opt<std::string>
    predictions("predictions",
                cl::desc("--from-runs: write each run with its prediction "
                         "(CSV)"),
                cl::value_desc("file"), cl::cat(category));
static cl::opt<double>
    budget("seconds",
           cl::desc("Measuring: seconds to spend at most (default 40)"),
           cl::init(40), cl::cat(category));

static LogicalResult writeCluster(const planning::Cluster &c) {
  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec);
  if (ec) {
    llvm::errs() << "error: cannot write '" << output << "': " << ec.message()
                 << "\n";
    return failure();
  }
  os << llvm::formatv("{0:2}", c.toJSON()) << "\n";
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Ober-Train: measure this machine, or fit a cluster to measured "
      "training steps, and write the cluster JSON the planner reads\n");
  std::string error;
  std::optional<planning::Cluster> cluster =
      planning::loadCluster(clusterName, std::nullopt, std::nullopt, error);
  if (!cluster) {
    llvm::errs() << "error: --cluster: " << error << "\n";
    return 1;
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  ToolDiagnosticHandler handler(&context);
  if (!fromRuns.empty()) {
    calibrate::FromRunsOptions o;
    o.runs = fromRuns;
    o.precision = precision;
    o.optimizer = optimizer;
    o.dropout = dropout;
    o.vocabulary = vocabulary;
    o.vocabularyMultiple = vocabularyMultiple;
    o.holdoutEvery = holdoutEvery;
    o.fitNorm = fitNorm;
    o.predictions = predictions;
    o.uniformStages = partition == "uniform";
    if (partition != "uniform" && partition != "balanced") {
      llvm::errs() << "error: --partition=" << partition
                   << " is not one of uniform, balanced\n";
      return 1;
    }
    if (o.precision != "f16" && o.precision != "bf16" && o.precision != "f32") {
      llvm::errs() << "error: --precision=" << o.precision
                   << " is not one of f16, bf16, f32\n";
      return 1;
    }
    if (!(fitNorm >= 1 && fitNorm <= 16)) {
      llvm::errs() << "error: --fit-norm="
                   << llvm::format("%g", fitNorm.getValue())
                   << " is not between 1 and 16\n";
      return 1;
    }
    if (holdoutEvery == 1) {
      llvm::errs() << "error: --holdout-every=1 leaves no run to fit\n";
      return 1;
    }
    if (vocabulary < 1 || vocabularyMultiple < 1) {
      llvm::errs() << "error: --vocabulary and --vocabulary-multiple must be "
                      "positive\n";
      return 1;
    }
    if (failed(calibrate::fitToRuns(context, *cluster, o)))
      return 1;
  } else {
    calibrate::MeasureOptions o;
    o.budget = budget;
    if (!(budget >= 1 && budget <= 3600)) {
      llvm::errs() << "error: --seconds=" << llvm::formatv("{0}", budget.getValue())
                   << " is not between 1 and 3600\n";
      return 1;
    }
    if (failed(calibrate::measureThisMachine(context, *cluster, o)))
      return 1;
    if (!o.writer)
      return 0;
  }
  return failed(writeCluster(*cluster)) ? 1 : 0;
}
