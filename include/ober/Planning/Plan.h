//===- Plan.h - a parallel plan, its estimate, and the search ----*- C++ -*-===//
//
// Part of Ober-Train. The problem model (what a plan is, what it costs, what
// it needs in memory: `evaluate`) is apart from the solver (`search`), which
// enumerates the discrete choices, partitions the segment chain into
// pipeline stages by a bottleneck search, and keeps the fastest plan that
// fits. Both are deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_PLAN_H
#define OBER_PLANNING_PLAN_H

#include "ober/Planning/ModelProfile.h"
#include "ober/Planning/Timeline.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

namespace mlir::ober::planning {

using ::mlir::ober::Recompute;

/// A schedule option's value: a plan's name for it (`stringifySchedule`)
/// or a common alias (`interleaved`, `zb`, `zb-h1`).
std::optional<Schedule> parseSchedule(StringRef s);

/// The names of every value of a plan enum, for messages ("a, b, c").
template <typename Enum, typename Stringify, typename Max>
std::string enumNames(Stringify stringify, Max max) {
  std::string out;
  for (unsigned i = 0; i <= max(); ++i)
    out += (i ? ", " : "") + stringify(static_cast<Enum>(i)).str();
  return out;
}

struct PlanConfig {
  int64_t tp = 1, pp = 1, dp = 1;
  int64_t microBatch = 1, numMicroBatches = 1;
  /// Model chunks per device (interleaved 1F1B); 1 otherwise.
  int64_t chunks = 1;
  Schedule schedule = Schedule::OneFOneB;
  Recompute recompute = Recompute::None;
  /// Full recomputation keeps the input of every this-many segments of a
  /// stage (counted from its start) and rebuilds the group between them
  /// in the backward pass (Megatron's uniform method; 1: every segment,
  /// which for a GPT is every half-layer). 0: the evaluation chooses the
  /// smallest that fits.
  int64_t recomputeEvery = 1;
  /// Full recomputation rebuilds only the first this-many groups of each
  /// chunk and keeps every activation of the rest (Megatron's block
  /// method); 0: every group (the uniform method); -1: the evaluation
  /// chooses the fewest that fit.
  int64_t recomputeGroups = 0;
  bool sequenceParallel = false;
  int zeroStage = 0;
  /// Steps each data-parallel replica takes alone between averages of
  /// their parameters (local SGD; 1: gradients averaged every step).
  int64_t localSteps = 1;
};

/// Bytes one device of a stage holds.
struct StageMemory {
  double parameters = 0, gradients = 0, optimizer = 0, activations = 0,
         working = 0;
  /// What the update after the backward pass adds, when the activations
  /// and the working set are gone: under ZeRO 1 and 2 the parameters
  /// gathered from the updated shards, beside the old ones.
  double update = 0;
  double total() const {
    return parameters + gradients + optimizer +
           std::max(activations + working, update);
  }
};

struct StageEstimate {
  /// Segments [first, end) per model chunk of this device.
  llvm::SmallVector<std::pair<unsigned, unsigned>, 2> chunks;
  /// Seconds per micro-batch: forward, backward (with recomputation), and
  /// the tensor-parallel communication inside them.
  double forward = 0, backward = 0, tpComm = 0;
  int64_t inFlight = 0;
  /// Parameter elements this device holds before ZeRO sharding.
  double parameterElements = 0;
  StageMemory memory;
};

struct PlanEstimate {
  PlanConfig config;
  std::vector<StageEstimate> stages;
  double stepTime = 0;
  /// Breakdown of stepTime: compute (the slowest stage's forward and
  /// backward over all micro-batches), exposed communication (tensor
  /// parallel, pipeline sends, the part of the data-parallel reduction that
  /// backward does not hide), bubble, optimizer update (with the passes
  /// over the gradients before it: bucket copies, norms).
  double compute = 0, exposedComm = 0, bubble = 0, optimizer = 0;
  double tpComm = 0, dpComm = 0, dpCommExposed = 0, p2pComm = 0;
  /// FLOPs of one step on all devices: model (forward and backward once)
  /// and hardware (plus recomputed forward work).
  double modelFlops = 0, hardwareFlops = 0;
  double peakMemory = 0;
  unsigned peakStage = 0;
  bool fits = false;
  /// Saved activation bytes per micro-batch of each segment kind.
  std::vector<double> kindActivationBytes;
  /// Where each virtual stage starts, and each one's pass times (for the
  /// timeline the report draws).
  std::vector<unsigned> starts;
  std::vector<ChunkTimes> chunkTimes;
  /// Whether stepTime comes from the simulated timeline (else a bound).
  bool simulated = false;
};

/// Everything that is fixed while the search runs.
struct PlanProblem {
  const ModelProfile *profile = nullptr;
  Cluster cluster;
  std::string precision = "bf16";
  int64_t globalBatch = 1;
  /// Usable bytes per device.
  double memoryLimit = 0;
  /// Sums the step takes over every gradient after reducing them: the
  /// global norm of gradient clipping or the one it reports (grad-norm),
  /// the overflow probe of dynamic loss scaling (each one more all-reduce
  /// when ZeRO shards gradients, and passed through the pipeline stages;
  /// clipping and the probe send their result back to every stage).
  bool clipNorm = false, gradNorm = false, lossScaling = false;
  /// A segment kind's tensor-parallel collective seconds (PlanModel.cpp).
  struct CollectiveTimes {
    /// Forward ones full recomputation repeats; of them, those it repeats
    /// at a stage's end too, and those of them on the segment's input.
    double forward = 0, neededAtStageEnd = 0, ofInputAtStageEnd = 0;
    /// Per micro-batch, and once per step; the forward ones selective
    /// recomputation repeats.
    double perMicroBatch = 0, perStep = 0, selective = 0;
  };
  /// The search's memo of them, by kind, degree, sequence parallelism and
  /// micro-batch size.
  mutable std::map<std::array<int64_t, 4>, CollectiveTimes> collectiveTimes;
  /// Matmul seconds per sample from the device's GEMM table: the forward
  /// and backward passes, and the forward GEMMs full recomputation rebuilds
  /// where it rebuilds only what the backward pass reads.
  struct MatmulSeconds {
    double forward = 0, backward = 0, needed = 0;
  };
  /// The search's memo of them, by kind, degree and micro-batch size.
  mutable std::map<std::array<int64_t, 3>, MatmulSeconds> matmulSeconds;
};

/// The estimate of `config` with pipeline stages (times chunks) starting at
/// the segments in `starts` (ascending, starting at 0).
/// Whether `plan` recomputes `op` of segment `segment`: full
/// recomputation repeats every segment but the last, except the ops that
/// make the inputs it keeps; selective the segment's selective ops.
bool recomputes(const PlanEstimate &plan, const ModelProfile &m,
                unsigned segment, Operation *op);

/// The plan's recomputation in words: "full (every 2 segments, the first 3
/// groups of each stage)".
std::string describeRecompute(const PlanConfig &c);

/// Whether full recomputation rebuilds segment `segment` in the backward
/// pass: not the model's last, and under the block method only the first
/// recomputeGroups groups of its chunk.
bool rebuildsSegment(const PlanEstimate &plan, const ModelProfile &m,
                     unsigned segment);

/// Under full recomputation, whether `plan` keeps segment `segment`'s
/// input (the first of a group of recomputeEvery segments of a chunk) and
/// its output (the last of a group, of a chunk, or of the model): the
/// collectives that move or complete a kept value are not repeated.
bool keepsInput(const PlanEstimate &plan, const ModelProfile &m,
                unsigned segment);
bool keepsOutput(const PlanEstimate &plan, const ModelProfile &m,
                 unsigned segment);

///
/// The pipeline timeline is simulated only for a plan that fits and whose
/// lower bound (its busiest device's passes, then the optimizer) is below
/// `simulateBelow`; otherwise `stepTime` is that bound and `simulated`
/// false (the search skips plans that cannot beat those it keeps).
PlanEstimate evaluate(const PlanProblem &problem, const PlanConfig &config,
                      ArrayRef<unsigned> starts,
                      double simulateBelow = HUGE_VAL);

/// Seconds of one micro-batch through segment `index` under `config`
/// (forward, backward, recomputation, tensor-parallel collectives).
double segmentSeconds(const PlanProblem &problem, const PlanConfig &config,
                      unsigned index);

/// Stage starts that balance time under the memory limit (1F1B-style
/// schedules hold more micro-batches on early stages), or nothing when no
/// partition fits by the estimate. Not for interleaved schedules.
std::vector<unsigned> memoryAwarePartition(const PlanProblem &problem,
                                           const PlanConfig &config);

/// Choices the user fixed; unset ones are searched.
struct PlanPins {
  std::optional<int64_t> tp, pp, dp, microBatch, chunks;
  std::optional<Schedule> schedule;
  std::optional<Recompute> recompute;
  std::optional<int64_t> recomputeEvery;
  /// 0: every group (Megatron's uniform method); N: the first N.
  std::optional<int64_t> recomputeGroups;
  /// Stages take equal runs of the segments between the model's first
  /// and last (uniformStarts) instead of the balanced partition.
  bool uniformStages = false;
  std::optional<bool> sequenceParallel;
  std::optional<int> zeroStage;
  /// Local SGD is never chosen by the search (it changes the training
  /// algorithm); a plan takes it when pinned.
  std::optional<int64_t> localSteps;
};

/// How many of the fastest plans that fit the search keeps, ranked.
constexpr size_t kRankedPlans = 5;

struct SearchResult {
  PlanEstimate best;
  /// The fastest plans that fit (at most kRankedPlans), fastest first:
  /// ranked[0] is `best`, the rest the alternatives the report lists.
  std::vector<PlanEstimate> ranked;
  /// The plan that needs the least memory, when none fits.
  PlanEstimate leanest;
  bool found = false;
  int64_t evaluated = 0;
};

/// The starts of `groups` virtual stages over `segments` segments with as
/// many segments each (the earlier ones one more where they do not divide)
/// between the first segment, on the first stage, and the last, on the
/// last: the embedding and the head apart, as Megatron places layers.
/// Needs at least `groups` segments between the first and the last.
std::vector<unsigned> uniformStarts(unsigned segments, int64_t groups);

/// The tensor-parallel degrees the search considers for `gpus` devices
/// (with `pins`), to be profiled before searching.
std::vector<int64_t> candidateDegrees(const Cluster &cluster, int64_t gpus,
                                      const PlanPins &pins);

/// Finds the fastest plan that fits; `error` explains why none can exist
/// (pins that contradict each other or the model).
FailureOr<SearchResult> search(const PlanProblem &problem,
                               const PlanPins &pins, std::string &error);

/// A collective (or point-to-point transfer) the plan inserts, as one
/// device of a pipeline stage sees it.
struct PlannedCollective {
  /// "tensor-parallel", "data-parallel" or "pipeline".
  std::string scope;
  /// "all-reduce", "all-gather", "reduce-scatter", "reduce-scatter +
  /// all-gather" or "send/recv".
  std::string kind;
  int64_t stage = 0, groupSize = 1;
  /// Bytes of the full buffer per occurrence, and occurrences per step
  /// (or, with `everySteps` > 1, per that many steps).
  double bytes = 0;
  int64_t perStep = 0;
  std::string reason, where;
  int64_t everySteps = 1;
};

/// Every collective of `plan`, stage by stage, by the cost model.
std::vector<PlannedCollective> plannedCollectives(const PlanProblem &problem,
                                                  const PlanEstimate &plan);

/// Bytes in the largest binary unit that keeps the number at least one
/// ("7.17 MiB").
std::string formatBytes(double bytes);

/// The report (`--ober-plan-report`): `plan` in full, and the
/// configuration and step time of each of `alternatives` (the next fastest
/// plans that fit, fastest first).
llvm::json::Object reportJSON(const PlanProblem &problem,
                              const PlanEstimate &plan,
                              ArrayRef<PlanEstimate> alternatives,
                              double planSeconds, int64_t evaluated);

/// The same as a self-contained HTML page (`--ober-plan-report=plan.html`):
/// the plan table, the simulated pipeline timeline and memory per stage as
/// SVG pictures, the collectives with their reasons, the alternatives.
void writePlanHTML(const PlanProblem &problem, const PlanEstimate &plan,
                   ArrayRef<PlanEstimate> alternatives, double planSeconds,
                   int64_t evaluated, llvm::raw_ostream &os);

/// The table printed to stderr, and the collective list of
/// `--ober-plan-explain`.
void printPlanTable(const PlanProblem &problem, const PlanEstimate &plan,
                    llvm::raw_ostream &os);
void printPlanExplain(const PlanProblem &problem, const PlanEstimate &plan,
                      llvm::raw_ostream &os);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_PLAN_H
