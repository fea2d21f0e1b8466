//===- Interpreter.h - the reference interpreter ----------------*- C++ -*-===//
//
// Part of Ober-Train. Plain, obviously correct execution of ober IR on the
// CPU: the semantic oracle for importers, autodiff and partitioning. Not the
// fast path.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_REFERENCE_INTERPRETER_H
#define OBER_REFERENCE_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "ober/Reference/Tensor.h"

namespace mlir::ober::reference {

/// Evaluates one op (ober ops and arith.constant) on concrete operands whose
/// shapes match the op's static operand types. On invalid run-time data (an
/// index out of range, an integer division by zero) emits an error at the
/// op and fails.
LogicalResult evaluate(Operation *op, ArrayRef<Tensor> operands,
                       SmallVectorImpl<Tensor> &results);

/// True if `evaluate` knows `op`.
bool canEvaluate(Operation *op);

/// Every tensor under `root` can be counted and fits in the memory this
/// process can get as the interpreter stores it (8 bytes an element);
/// otherwise an error naming the tensor, how much it needs and how much
/// there is.
LogicalResult checkHostMemory(Operation *root);

struct RunStats {
  /// The most bytes held at once by arguments and live intermediate values
  /// (each value freed after its last use), at element-type width.
  int64_t peakLiveBytes = 0;
  int64_t opsExecuted = 0;
};

/// Runs functions of a module. Functions must have static shapes (see
/// refineFunctionShapes for pinning dynamic ones).
class Interpreter {
public:
  explicit Interpreter(ModuleOp module) : module(module) {}

  /// Runs `func` on `args`, checking their count, shapes and element types.
  FailureOr<SmallVector<Tensor>> run(func::FuncOp func, ArrayRef<Tensor> args);

  const RunStats &getStats() const { return stats; }

  /// Makes this interpreter device `rank` of `communicator`, which runs the
  /// `shard` collectives it meets.
  void setDevice(class Communicator *communicator, int64_t rank) {
    this->communicator = communicator;
    this->rank = rank;
  }

private:
  /// The values of the blocks around the one running (a loop body's
  /// captures), innermost first.
  struct Scope {
    const DenseMap<Value, Tensor> &values;
    const Scope *parent;
  };
  /// Runs `block` on `args`.
  LogicalResult runBlock(Block &block, ArrayRef<Tensor> args,
                         SmallVectorImpl<Tensor> &results, int64_t &live,
                         const Scope *outer = nullptr);
  /// Runs an `scf.for` with constant bounds: its body once per iteration,
  /// the iteration's results the next one's arguments. `movedBytes` of the
  /// initial values were freed by the caller (read nowhere else).
  LogicalResult runLoop(Operation *loop, ArrayRef<Tensor> init,
                        SmallVectorImpl<Tensor> &results, int64_t &live,
                        const Scope &scope, int64_t movedBytes);

  ModuleOp module;
  RunStats stats;
  class Communicator *communicator = nullptr;
  int64_t rank = 0;
};

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_INTERPRETER_H
