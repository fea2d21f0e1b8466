//===- ModelProfile.h - what the planner knows about a train step -*- C++ -*-===//
//
// Part of Ober-Train. The planner never walks the IR while it searches: it
// first cuts the forward part of the gradient function into a chain of
// segments (at values that alone carry the activations from one part to the
// next: the residual stream between transformer half-layers, the output of
// a residual block), profiles each distinct segment once (repeated layers
// share a profile), and then evaluates plans from these numbers.
//
// All times are for one sample at the IR's batch divided out, on one device
// of the cluster, at the plan's precision; sizes are elements (bytes follow
// from the precision).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_MODELPROFILE_H
#define OBER_PLANNING_MODELPROFILE_H

#include "ober/Planning/CostModel.h"
#include "ober/Training/GradientFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mlir::ober::planning {

/// How a quantity behaves under tensor parallelism of degree t.
/// `split`: divided by t (a sharded op, activation or parameter);
/// `seq`: replicated, but divided by t with sequence parallelism (per-token
/// work outside the tensor-parallel regions); `full`: never divided.
struct ByTP {
  double split = 0, seq = 0, full = 0;
  double at(int64_t t, bool sequenceParallel) const {
    return split / t + (sequenceParallel ? seq / t : seq) + full;
  }
  double total() const { return split + seq + full; }
  ByTP &operator+=(const ByTP &o) {
    split += o.split;
    seq += o.seq;
    full += o.full;
    return *this;
  }
};

/// A collective the tensor-parallel split of one segment needs in its
/// forward pass; the backward pass needs its mirror image (an all-reduce of
/// a partial sum forward is an all-reduce of the input gradient backward).
struct TPCollective {
  Collective kind = Collective::AllReduce;
  /// Elements of the full (unsharded) buffer: per sample, or, for a
  /// parameter's gradient (`perSample` false), per micro-batch.
  double elements = 0;
  /// What it is for, e.g. "partial sums of ober.matmul (row-parallel)".
  std::string reason;
  /// The op it follows, printed for --ober-plan-explain.
  std::string where;
  /// Which passes run it: the forward (completing a row-parallel matmul's
  /// partial sums, gathering a split, the cross-entropy's statistics, which
  /// the backward softmax reuses), the backward (the input gradient of a
  /// column-parallel matmul), or both (statistics over a split axis, whose
  /// gradient needs them again).
  enum class Pass : uint8_t { Both, Forward, Backward } pass = Pass::Both;
  bool perSample = true;
  /// Runs once per step, not per micro-batch (a gradient kept split while
  /// the micro-batches accumulate it, gathered for the optimizer).
  bool oncePerStep = false;
  /// A forward one: whether full recomputation repeats it in the last
  /// segment of a pipeline stage (or chunk), where the backward pass reads
  /// what it completes only through the segment's output, which the next
  /// stage computes from (so its op is not recomputed).
  bool recomputedAtStageEnd = true;
  /// A forward one on the activation the segment receives (moving it, or
  /// its softmax statistics): at the start of a pipeline stage (or chunk)
  /// that is the received value, which recomputation keeps, so the program
  /// does not repeat it.
  bool ofInput = false;
  /// A forward one of an op selective recomputation repeats (statistics of
  /// attention scores split by tokens): repeated with it.
  bool ofSelective = false;
  /// A forward one that moves a parameter (or a view of one): the moved
  /// copy serves the micro-batch's recomputation too.
  bool ofParameter = false;
  int64_t timesPerMicroBatch() const { return pass == Pass::Both ? 2 : 1; }
  /// Occurrences in a step of `microBatches` micro-batches (before
  /// recomputation repeats forward ones).
  int64_t timesPerStep(int64_t microBatches) const {
    return oncePerStep ? 1 : timesPerMicroBatch() * microBatches;
  }
  /// Elements of the full buffer for micro-batches of `microBatch` samples.
  double elementsFor(int64_t microBatch) const {
    return perSample ? elements * microBatch : elements;
  }
};

/// How tensor parallelism splits the one activation between two segments:
/// a dimension and the groups of its split (Placement), or whole (`dim`
/// -1). A split one stays split into the next segment (the partitioner
/// keeps it) and crosses a pipeline stage boundary as each rank's share,
/// with no gather on arrival.
struct TPBoundary {
  int64_t dim = -1, groups = 1;
  bool isSplit() const { return dim >= 0; }
  bool operator==(const TPBoundary &o) const {
    return dim == o.dim && groups == o.groups;
  }
};

/// A segment under tensor parallelism of one degree.
struct TPProfile {
  int64_t degree = 1;
  /// How the activation the segment hands to the next one is split, and
  /// whether sequence parallelism splits it by tokens.
  TPBoundary boundary;
  /// How the gradient of the activation it receives, which its backward
  /// pass hands to the previous segment's, is split.
  TPBoundary gradientOut;
  /// The collectives (without sequence parallelism), and the walk with it:
  /// its collectives and how it hands on the activation (split by tokens,
  /// or as `boundary`) and the gradient.
  std::vector<TPCollective> collectives, sequenceCollectives;
  TPBoundary sequenceBoundary, sequenceGradientOut;
  const std::vector<TPCollective> &collectivesFor(bool sequence) const {
    return sequence ? sequenceCollectives : collectives;
  }
  /// Forward seconds per sample by class (matrix units / other).
  ByTP forwardMatmul, forwardOther;
  /// Bytes per sample of the largest lowering workspace (loweringWorkspace)
  /// of a forward op that this degree leaves whole on each device: an
  /// attention whose heads stay whole, or a convolution whose input does
  /// (one split by output channels still gathers every input channel).
  double wholeWorkspace = 0;
  /// The forward pass's GEMMs (matmuls, convolutions, attention) as
  /// shapes: a measured GEMM table prices them at the plan's micro-batch
  /// and split, where efficiency differs from the profiled shapes.
  struct Gemm {
    /// FLOPs and rows per sample; columns and depth.
    double flops = 0, m = 0, n = 0, k = 0;
    /// The dimension tensor parallelism divides (rows: a batch or head
    /// split; columns: column-parallel; depth: partial sums).
    enum Split : uint8_t { None, Rows, Columns, Depth } split = None;
    /// Rows of each independent product (OpWork::rows; 0: one GEMM).
    double rows = 0;
    /// The share of `flops` computed (OpWork::computed).
    double computed = 1;
    /// Whether full recomputation rebuilds it where it rebuilds only what
    /// the backward pass reads (`needed` below).
    bool needed = false;
  };
  std::vector<Gemm> gemms;
  /// Activations the backward pass reads, bytes per sample (floating-point
  /// values at the precision's width, others at their own).
  ByTP saved;
  /// The part of `saved` that selective recomputation drops, and the
  /// forward seconds per sample that recomputing it costs.
  ByTP selectiveSaved, selectiveTime;
  /// Matrix-unit FLOPs per sample that selective recomputation repeats.
  double selectiveFlops = 0;
  /// Kernels per micro-batch (after fusion): forward, and those selective
  /// recomputation repeats.
  double forwardKernels = 0, selectiveKernels = 0;
  /// What full recomputation rebuilds of a segment whose output it keeps
  /// (the next one's input) where the executor rebuilds only the values the
  /// backward pass reads, and what they are made from inside the segment
  /// (the project's partitioner; Device::recomputeWholeForward otherwise):
  /// forward seconds per sample by class, kernels per micro-batch, and
  /// matrix-unit FLOPs per sample.
  ByTP neededMatmul, neededOther;
  double neededKernels = 0, neededFlops = 0;
  /// The softmaxes over the last axis of rank-3+ values (attention
  /// scores), as each device holds them: score batches (the dimensions
  /// before the last two: heads per sample, fewer where split) and score
  /// elements per sample, and the keys (the softmax's length). A kernel
  /// library's fusion rule (Device::SoftmaxFusion) prices them.
  struct Softmax {
    double batches = 0, elements = 0, keys = 0;
    /// Whether selective recomputation repeats it, and whether full
    /// recomputation of the segment's needed values does.
    bool selective = false, needed = false;
  };
  std::vector<Softmax> softmaxes;
  /// Parameter elements.
  ByTP parameters;
  /// Per-parameter decisions ("column", "row", "vocab", "replicated").
  struct ParameterSplit {
    std::string name, how; // how: replicated, column, row, split, vocab
    int64_t dim = -1;      // the stored parameter's split dimension
  };
  std::vector<ParameterSplit> parameterSharding;
};

/// One segment of the forward chain.
struct Segment {
  /// Index of the distinct profile (equal for repeated layers).
  unsigned kind = 0;
  /// Forward ops (in the gradient function) of this segment, and the
  /// backward ops that go with it (those that read its values first).
  std::vector<Operation *> ops, backward;
  /// Elements per sample of the value that leaves the segment (what a
  /// pipeline stage boundary here sends forward, and its gradient back).
  double boundaryElements = 0;
  /// That value (null for the last segment).
  Value boundary;
  /// Whether its gradient comes back (a backward op of this segment or an
  /// earlier one reads what a later segment's backward ops make; not when
  /// nothing before the boundary trains).
  bool gradientBack = false;
  /// The ops selective recomputation repeats.
  std::vector<Operation *> selective;
};

/// A parameter read by more than one segment (tied embeddings).
struct SharedParameter {
  std::string name;
  unsigned first = 0, last = 0;
  double elements = 0;
};

/// The profile of one distinct segment.
struct SegmentKind {
  std::string signature;
  unsigned count = 0;
  /// A readable name (the first parameter's name, else the first op).
  std::string name;
  /// Backward seconds per sample (ops of the backward pass attributed to
  /// segments of this kind), split into matrix-unit and other work.
  double backwardMatmul = 0, backwardOther = 0;
  /// Kernels of the backward pass per micro-batch.
  double backwardKernels = 0;
  /// Matrix-unit FLOPs per sample: forward, and forward + backward.
  double forwardFlops = 0, trainFlops = 0;
  /// Bytes per sample of the largest floating-point value (a transient
  /// while its gradient is formed).
  double largestValue = 0;
  /// Bytes per sample of the largest buffer the lowering adds beside the
  /// traced IR's values while an op runs: a block of attention scores and
  /// probabilities (AttentionLowering), or a convolution's columns as
  /// products (Cluster::gemmConvolutions).
  double loweringWorkspace = 0;
  std::vector<TPProfile> tp; // one per candidate degree
  /// Per candidate degree, how the activation it receives is split
  /// (without and with sequence parallelism), and how the gradient of the
  /// activation it hands on comes back from the next segment's backward
  /// pass (nullopt: split as that activation is, before the next segment
  /// is analysed).
  std::vector<TPBoundary> incoming, sequenceIncoming;
  std::vector<std::optional<TPBoundary>> gradientIn, sequenceGradientIn;
  const TPProfile &at(int64_t degree) const;
};

struct ModelProfile {
  std::string function;      // the gradient function
  int64_t irBatch = 1;       // samples in one call of it
  std::string optimizer;     // from ober.train_step
  std::string irElementType; // "f32", "bf16", ...
  std::vector<Segment> segments;
  std::vector<SegmentKind> kinds;
  /// Matrix-unit FLOPs per sample of the whole gradient function (forward
  /// and backward once), and those outside every segment; and the FLOPs
  /// it spends repeating forward work (OpWork::repeated: hardware, not
  /// model FLOPs).
  double trainFlops = 0, repeatedFlops = 0;
  /// Parameters in total (elements).
  double parameters = 0;
  /// Each parameter: its shape (ZeRO shards a parameter along a dimension
  /// the data-parallel devices divide), whether the backward pass reads it
  /// or a view of it (ZeRO-3 gathers only those again), and whether it is
  /// a buffer updated by the forward pass (batch-norm running statistics:
  /// no gradient to reduce).
  struct ParameterInfo {
    std::string name;
    std::vector<int64_t> shape;
    bool readBackward = false, buffer = false;
  };
  std::vector<ParameterInfo> parameterInfo;
  std::vector<SharedParameter> shared;
  /// Bytes per sample of the activation working set at the gradient
  /// function's peak (its liveness peak without arguments and results), and
  /// of the saved activations (no parallelism, no recomputation).
  double activationPeak = 0, savedTotal = 0;
  /// Bytes of parameter gradients live at that peak (they are produced
  /// during the backward pass; a step without gradient accumulation needs
  /// no more).
  double gradientsAtPeak = 0;
  /// Bytes per sample of the batch inputs (tokens, labels).
  double inputBytes = 0;
  /// The tensor-parallel degrees profiled.
  std::vector<int64_t> degrees;
  /// Whether tensor parallelism of `degree` splits anything (a parameter,
  /// an op's work, a collective) in some segment; true for a degree not
  /// profiled. A degree that splits nothing only repeats the whole step.
  bool splitsAt(int64_t degree) const;
  /// Width in bytes of floating-point values at the profiled precision.
  unsigned floatBytes = 4;
};

/// Profiles the train step in `module` for `cluster` at `precision` ("bf16",
/// "f16", "f32"), analysing tensor parallelism of each degree in `degrees`.
FailureOr<ModelProfile> profileTrainStep(ModuleOp module, const Cluster &cluster,
                                         StringRef precision,
                                         ArrayRef<int64_t> degrees);

/// The tensor-parallel analysis of one segment's forward ops (exposed for
/// ModelProfile.cpp; see TensorParallel.cpp).
using ::mlir::ober::parameterRoot;
using ::mlir::ober::viewRoot;

/// The parameters (by name) the ops of `segment` read, directly or through
/// reshapes, transposes and casts.
llvm::StringSet<> parametersOf(const Segment &segment);

/// How tensor parallelism of `degree` splits each parameter `segment`
/// reads, by name: its kind's decision mapped from the kind's first segment
/// by op position.
std::map<std::string, TPProfile::ParameterSplit>
segmentSplits(const ModelProfile &m, unsigned segment, int64_t degree);

/// How tensor parallelism of `degree` splits each parameter, by name (the
/// first segment that reads it decides).
std::map<std::string, TPProfile::ParameterSplit>
parameterSplits(const ModelProfile &m, int64_t degree);

/// The segment's two ends: the activation it receives from the previous
/// segment (null for the first) split as `incoming`, and the one it hands
/// to the next (null for the last).
struct SegmentEnds {
  Value in, out;
  /// How `in` is split, and how the gradient of `out` comes back (nullopt:
  /// split as `out` is), without and with sequence parallelism.
  TPBoundary incoming, sequenceIncoming;
  std::optional<TPBoundary> gradientIn, sequenceGradientIn;
};

/// What the analyses of all segments settled about parameters, for
/// analysing one again: those that stay whole (tied ones the segments
/// disagree on), and each one's split where another segment decides it (a
/// backward op of this segment may read it, or make its gradient).
struct KnownParameters {
  std::set<std::string> whole;
  std::map<std::string, TPProfile::ParameterSplit> decided;
};

TPProfile analyseTensorParallel(ArrayRef<Operation *> ops,
                                ArrayRef<Operation *> backward, int64_t degree,
                                const Cluster &cluster, StringRef precision,
                                double samples,
                                const llvm::DenseSet<Value> &saved,
                                const llvm::DenseSet<Operation *> &selective,
                                const llvm::DenseSet<Operation *> &forward,
                                const SegmentEnds &ends,
                                const llvm::DenseMap<Value, int64_t> &batchDims,
                                const KnownParameters &known = {});

/// Elementwise ops (with broadcasting): what a code generator fuses.
bool isElementwiseLike(Operation *op);

/// Seconds of one op on `cluster` at `precision`, assuming the code
/// generator fuses chains of elementwise ops (into each other, into a
/// following reduction or normalization, and as a matmul epilogue): a value
/// produced and consumed only inside such a chain is never written to
/// memory, unless it is in `materialized` (saved for the backward pass).
double opSeconds(Operation *op, const Cluster &cluster, StringRef precision,
                 const llvm::DenseSet<Value> &materialized);

/// Whether `op` ends a kernel under the same fusion rules (it does work and
/// writes a result to memory).
bool endsKernel(Operation *op, const llvm::DenseSet<Value> &materialized);

/// What a contraction's lowering runs besides its matrix products (whose
/// FLOPs workOf counts): for an attention or attention_grad, the scale,
/// mask, softmax and score-gradient ops (ober-block-attention's blocks,
/// each decomposed: the scores go through memory between the products),
/// priced by opSeconds and endsKernel; for a convolution lowered to
/// products, the gather of its windows into columns (one memory-bound
/// kernel, convolutionGatherBytes). Zero for any other op, and for one
/// with dynamic shapes.
struct SideWork {
  double seconds = 0, kernels = 0;
};
SideWork sideWork(Operation *op, const Cluster &cluster, StringRef precision);

/// Bytes of the largest buffer `op`'s lowering adds beside its operands and
/// results (SegmentKind::loweringWorkspace): a block of attention scores
/// and probabilities, or a convolution's columns as products.
double loweringWorkspace(Operation *op, const Cluster &cluster,
                         StringRef precision);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_MODELPROFILE_H
