//===- Lowered.cpp - the collectives a partitioned step runs --------------===//
//
// Part of Ober-Train. Partitions a copy of a planned module and lists, stage
// by stage, every collective and pipeline transfer its programs run in one
// step, with the bytes of the full buffer: what `ober-run --run-stats`
// measures on one replica. The planner reports this list for the plan it
// chose, next to its cost model's estimate.
//
//===----------------------------------------------------------------------===//

#include "StepPartitioner.h"

#include "ober/Dialect/Ober/IR/OberDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ober;

namespace {
int64_t bytesOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  int64_t bits = t.getElementType().getIntOrFloatBitWidth();
  return t.getNumElements() * ((bits + 7) / 8);
}

/// The parallelism a collective's grid axes belong to.
std::string scopeOf(ArrayRef<int16_t> axes) {
  std::string out;
  for (int16_t a : axes) {
    if (!out.empty())
      out += " x ";
    out += a == partition::kDp   ? "data-parallel"
           : a == partition::kTp ? "tensor-parallel"
                                 : "pipeline";
  }
  return out;
}

/// Why a collective runs: what made its operand and what reads its result.
std::string reasonOf(Operation *op) {
  std::string out;
  if (Operation *def = op->getOperand(0).getDefiningOp())
    out += "after " + def->getName().getStringRef().str();
  else
    out += "on an argument";
  if (op->getNumResults() && !op->getResult(0).use_empty())
    out += ", for " +
           (*op->getResult(0).getUsers().begin())->getName().getStringRef().str();
  return out;
}
} // namespace

FailureOr<std::vector<planning::PlannedCollective>>
mlir::ober::loweredCollectives(ModuleOp planned, std::string &why) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(planned->clone()));
  SmallVector<func::FuncOp> steps;
  for (auto f : copy->getOps<func::FuncOp>())
    if (f->hasAttr(OberDialect::kTrainStepAttrName))
      steps.push_back(f);
  if (steps.size() != 1) {
    why = "the module has no single train step to partition";
    return failure();
  }
  std::string message;
  {
    ScopedDiagnosticHandler quiet(planned.getContext(), [&](Diagnostic &d) {
      if (message.empty())
        message = d.str();
      return success();
    });
    if (failed(partitionTrainStep(*copy, steps.front(), PartitionOptions())))
      return why = message, failure();
  }
  // The step's programs, one per pipeline stage.
  SmallVector<func::FuncOp> stages;
  for (auto f : copy->getOps<func::FuncOp>())
    if (f->hasAttr(OberDialect::kTrainStepAttrName))
      stages.push_back(f);
  if (auto names = stages.front()->getAttrOfType<ArrayAttr>(
          "ober.stage_functions")) {
    stages.clear();
    for (Attribute n : names)
      stages.push_back(copy->lookupSymbol<func::FuncOp>(
          cast<FlatSymbolRefAttr>(n).getValue()));
  }
  auto grid = *copy->getOps<shard::GridOp>().begin();
  ArrayRef<int64_t> shape = grid.getShape();
  auto groupOf = [&](ArrayRef<int16_t> axes) {
    int64_t n = 1;
    for (int16_t a : axes)
      n *= shape[a];
    return n;
  };
  std::vector<planning::PlannedCollective> out;
  auto add = [&](planning::PlannedCollective c) {
    // Repeats of the same collective count as one entry.
    for (planning::PlannedCollective &o : out)
      if (o.scope == c.scope && o.kind == c.kind && o.stage == c.stage &&
          o.groupSize == c.groupSize && o.bytes == c.bytes &&
          o.reason == c.reason) {
        ++o.perStep;
        return;
      }
    out.push_back(std::move(c));
  };
  for (auto [s, func] : llvm::enumerate(stages)) {
    int64_t stage = static_cast<int64_t>(s);
    std::string where = "in @" + func.getSymName().str();
    // One entry per collective: its kind, grid axes and the bytes of the
    // full buffer (what one device holds whole: the all-gather's result,
    // the all-to-all's input times the group).
    auto collective = [&](Operation *op, const char *kind,
                          ArrayRef<int16_t> axes, int64_t bytes) {
      add({scopeOf(axes), kind, stage, groupOf(axes), double(bytes), 1,
           reasonOf(op), where});
    };
    func.walk([&](Operation *op) {
      llvm::TypeSwitch<Operation *>(op)
          .Case([&](shard::AllReduceOp c) {
            collective(op, "all-reduce", c.getGridAxes(),
                       bytesOf(c.getInput()));
          })
          .Case([&](shard::AllGatherOp c) {
            collective(op, "all-gather", c.getGridAxes(),
                       bytesOf(c.getResult()));
          })
          .Case([&](shard::ReduceScatterOp c) {
            collective(op, "reduce-scatter", c.getGridAxes(),
                       bytesOf(c.getInput()));
          })
          .Case([&](shard::AllToAllOp c) {
            collective(op, "all-to-all", c.getGridAxes(),
                       bytesOf(c.getInput()) * groupOf(c.getGridAxes()));
          })
          .Case([&](shard::SendOp c) {
            add({"pipeline", "send/recv", stage, 2,
                 double(bytesOf(c.getInput())), 1, reasonOf(op), where});
          });
    });
  }
  return out;
}
