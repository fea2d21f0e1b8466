//===- StepPartitioner.h - a planned training step as programs -*- C++ -*-===//
//
// Part of Ober-Train. The state of partitioning one training step: the
// plan, how each argument is placed on the grid (TrainStep.cpp), the
// gradient reduction (Gradients.cpp), and the pipeline stages each op runs
// in, with the transfers between them and the schedule (Stages.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_PARTITIONING_STEPPARTITIONER_H
#define OBER_LIB_PARTITIONING_STEPPARTITIONER_H

#include "Spmd.h"

#include "ober/Partitioning/Partition.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"

#include <map>

namespace mlir::ober::partition {

/// The grid axes: data parallel, tensor parallel (size 1 without it), and
/// pipeline stages (only with pp > 1).
constexpr unsigned kDp = 0, kTp = 1, kPp = 2;

/// The plan's fields (`#ober.plan`, verified) as the partitioner uses them.
struct PlanFields {
  int64_t tp = 1, pp = 1, dp = 1, zero = 0, microBatches = 1, chunks = 1;
  /// Local SGD: steps the data-parallel replicas take apart (1: none).
  int64_t localSteps = 1;
  /// Samples per step over every data-parallel replica.
  int64_t globalBatch = 1;
  Recompute recompute = Recompute::None;
  Precision precision = Precision::F32;
  Schedule schedule = Schedule::OneFOneB;
  bool sequenceParallel = false;
};

FailureOr<PlanFields> readPlan(ModuleOp module);


/// The initial value of `v` when it is a value the micro-batch loop carries
/// (its body's argument), else `v` itself.
inline Value initialValueOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
      if (OpOperand *init = loop.getTiedLoopInit(arg))
        return init->get();
  return v;
}

class StepPartitioner {
public:
  StepPartitioner(ModuleOp module, func::FuncOp step, const PlanFields &plan,
                  const PartitionOptions &options)
      : module(module), step(step), plan(plan), options(options),
        builder(module.getContext()) {}

  LogicalResult run();

private:
  // Arguments and their placements (TrainStep.cpp).
  LogicalResult classifyArguments();
  int64_t zeroDim(unsigned param);
  Layout argLayout(unsigned i);
  Layout gradientTarget(unsigned t);
  DenseI64ArrayAttr splitAttr(const Layout &layout, int64_t rank);

  // Gradient reduction (Gradients.cpp).
  bool isAccumulation(Operation *op) const;
  void tag(Operation *op);
  void reduceGradients(unsigned stage, Location loc);
  void reduceBucket(unsigned stage, ArrayRef<unsigned> tags, bool scatter,
                    Location loc);

  // Stages, transfers and the schedule (Stages.cpp).
  LogicalResult assignStages();
  /// The pipeline stage that computes `serial` (-1: none, built where used).
  int stageOf(Value serial) const;
  LogicalResult buildStepOp(Operation &op);
  LogicalResult inlineCall(func::CallOp call, unsigned micro);
  Value fetch(unsigned stage, Value serial, int scope, Location loc);
  /// `v` (whole or partial, never split) reshaped to `shape`.
  Value asRank(Value v, ArrayRef<int64_t> shape, Location loc);
  Value backwardValue(unsigned stage, unsigned micro, Value v);
  /// Argument `arg` of the gradient function for micro-batch `micro` in
  /// `stage` (the call's operand there), and whether it is a parameter
  /// ZeRO-3 keeps sharded (to be gathered for each pass that reads it).
  std::pair<Value, bool> argumentOf(unsigned stage, unsigned micro,
                                    BlockArgument arg, Location loc);
  Block *phase(unsigned stage, unsigned micro, bool backward,
              unsigned chunk = 0);
  /// `local` cast to the compute type (mixed precision), else itself.
  Value lowered(Value local, Location loc);
  /// The stage's passes in order: (micro-batch, 0 forward / 1 backward /
  /// 2 weight gradients, model chunk).
  SmallVector<std::tuple<unsigned, unsigned, unsigned>>
  schedule(unsigned stage) const;
  /// Moves the ops of a backward pass that no transfer to an earlier stage
  /// waits for (the weight gradients) into a block of their own.
  Block *splitWeightGradients(Block *backward);
  LogicalResult finish(ArrayRef<Layout> argLayouts);

  // The micro-batch loop, kept as loops in every stage's program
  // (MicroBatchLoop.cpp, MicroBatches.cpp).
  LogicalResult buildLoop(scf::ForOp loop);
  /// The local argument of the loop's carried value `k` in `stage`'s
  /// micro-batch, created (with its local initial value) in `layout` when
  /// first needed.
  Value carriedArgument(scf::ForOp loop, unsigned stage, unsigned k,
                        const Layout &layout);
  /// Writes `stage`'s micro-batches in schedule order from its template.
  LogicalResult emitLoop(scf::ForOp loop, unsigned stage);

  ModuleOp module;
  func::FuncOp step;
  PlanFields plan;
  PartitionOptions options;
  OpBuilder builder;
  std::unique_ptr<Spmd> spmd;

  SmallVector<unsigned> params;
  /// Argument -> the parameter (index into `params`) it is state of.
  DenseMap<unsigned, unsigned> stateOf;
  int64_t batchDim = 0;
  DenseSet<unsigned> buffers;
  /// Parameter argument -> the placement tensor parallelism gives it.
  DenseMap<unsigned, Placement> tpSplit;
  /// Serial values that hold a gradient (tag k < params.size()) or the
  /// loss (tag params.size()), the latest value of each tag, and the tags
  /// already reduced.
  DenseMap<Value, unsigned> tags;
  DenseMap<unsigned, Value> latest;
  DenseSet<unsigned> reduced;

  /// One program per pipeline stage: its function, and blocks for the ops
  /// before the micro-batches, each micro-batch's forward and backward
  /// pass, and the ops after them (spliced in schedule order at the end).
  struct Stage {
    func::FuncOp func;
    Block *entry = nullptr, *pre = nullptr, *post = nullptr;
    std::map<std::tuple<unsigned, bool, unsigned>, Block *> phases;
  };
  SmallVector<Stage> stages;
  /// maps[0][s]: the step's serial values in stage s; maps[1][s]: the
  /// gradient function's values (inlined once: for the micro-batch loop's
  /// body, or the step's one micro-batch).
  std::vector<std::vector<IRMapping>> maps;
  SmallVector<func::CallOp> calls;
  func::FuncOp grad;
  llvm::DenseSet<Operation *> forward;
  /// The stage of each op of the step and the gradient function (-1: no
  /// stage, built wherever it is used), and of the step's values.
  DenseMap<Operation *, int> opStage;
  /// The model chunk of each op (interleaved schedules; 0 otherwise).
  DenseMap<Operation *, unsigned> opChunk;
  DenseMap<Value, int> valueStage;
  DenseSet<Value> afterCalls;
  /// While the micro-batch loop is built: per stage, one micro-batch on
  /// local operands (its passes are the stage's `phases` of micro-batch
  /// 0): a block holding its arguments (the micro-batch index, carried
  /// values), the loop body's ops before and after the gradient function,
  /// and which carried values it holds with their local initial values.
  struct LoopTemplate {
    Block *args = nullptr, *head = nullptr, *tail = nullptr;
    /// Zero-bubble: each backward pass's weight gradients.
    SmallVector<Block *> weights;
    /// The micro-batch index (`indexStart + indexStep * i` in micro-batch
    /// i), null when the loop carries none.
    Value index;
    int64_t indexStart = 0, indexStep = 1;
    SmallVector<unsigned> carriedOrder;
    SmallVector<Value> carriedInit;
    DenseMap<unsigned, Value> carriedArgs;
  };
  std::vector<LoopTemplate> templates;
  bool inLoopTail = false;
  /// Per (stage, micro-batch): values the backward pass reads again.
  std::map<std::pair<unsigned, unsigned>, DenseMap<Value, Value>> again;
  int64_t nextTag = 0;
  /// The gradient function's compute type under mixed precision (bf16),
  /// null in f32.
  Type compute;
};

} // namespace mlir::ober::partition

#endif // OBER_LIB_PARTITIONING_STEPPARTITIONER_H
