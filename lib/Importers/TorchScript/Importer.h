//===- Importer.h - the state of one TorchScript import ---------*- C++ -*-===//
//
// Part of Ober-Train. A TorchScript value is, while importing, either an
// MLIR tensor (a graph input, a parameter, an op's result), a list of them
// (chunk, split), or a compile-time IValue (constants, and everything
// computed from constants and static shapes, which libtorch evaluates).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_IMPORTERS_TORCHSCRIPT_IMPORTER_H
#define OBER_LIB_IMPORTERS_TORCHSCRIPT_IMPORTER_H

#include "ober/Dialect/Ober/IR/OberShapeBuilder.h"
#include "ober/Dialect/Ober/IR/RecurrentBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <torch/script.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ober::torchscript {

using TSValue = torch::jit::Value;
using TSNode = torch::jit::Node;

class Importer : public OberShapeBuilder<Importer> {
public:
  Importer(MLIRContext &context) : b(&context), loc(UnknownLoc::get(&context)) {}

  /// An op of type OpTy; one that infers its result type is built with a
  /// provisional one and inferred here: when its operands do not fit, the
  /// node fails (`failedInference`) with the op's error.
  template <typename OpTy, typename... Args> Value create(Args &&...args) {
    return createInferred<OpTy>(b, loc, failedInference,
                                std::forward<Args>(args)...)
        ->getResult(0);
  }
  /// Whether an op built since the last call failed type inference.
  bool takeFailedInference() { return std::exchange(failedInference, false); }

  OpBuilder b;
  Location loc;

  // Values.
  std::map<const TSValue *, Value> tensors;
  std::map<const TSValue *, SmallVector<Value>> lists;
  std::map<const TSValue *, c10::IValue> known;
  /// Every value as computed on the example inputs (zeros of their shape):
  /// the static types a saved module no longer carries.
  std::map<const TSValue *, c10::IValue> example;
  /// Why libtorch could not run a node on the example values.
  std::map<const TSNode *, std::string> exampleFailures;

  /// Tensor input `v` (a known tensor becomes a constant); null with an
  /// error recorded when it is neither.
  Value tensor(const TSValue *v);
  bool isKnown(const TSValue *v) const { return known.count(v) > 0; }
  bool isNone(const TSValue *v) const {
    auto it = known.find(v);
    return it != known.end() && it->second.isNone();
  }
  int64_t integer(const TSValue *v);
  double number(const TSValue *v);
  std::vector<int64_t> integers(const TSValue *v);
  /// The traced type of `v` as a ranked tensor type (null when it has no
  /// static shape or dtype).
  RankedTensorType typeOf(const TSValue *v);
  Type elementType(c10::ScalarType type);
  /// A constant tensor of `value` (a known tensor or number) shaped like
  /// `like`'s element type, rank 0 for a number.
  Value constant(const c10::IValue &value, Type element);

  /// Converts aten op `node` (AtenOps.cpp); false with an error recorded
  /// when it has no mapping or unsupported arguments.
  bool convert(TSNode *node);
  /// Whether `node`'s kind has a mapping (AtenOps.cpp).
  static bool mapped(TSNode *node);
  /// The cell of aten::lstm, gru, rnn_tanh, rnn_relu (by base name), and
  /// their conversion (RecurrentOps.cpp).
  static std::optional<RecurrentCell> recurrentCell(const std::string &op);
  bool convertRecurrent(TSNode *node, RecurrentCell cell);
  /// torch.nn's fused inference kernels (FusedOps.cpp), by base name.
  static bool isFused(const std::string &op);
  bool convertFused(TSNode *node, const std::string &op);
  /// A list of tensors: one built from tensors, or a known one (as
  /// constants); nullopt when `v` is neither.
  std::optional<SmallVector<Value>> tensorList(const TSValue *v);

  /// Everything the importer knows of a value, to carry it into a block
  /// or out of one.
  struct Snapshot {
    std::optional<Value> tensor;
    std::optional<SmallVector<Value>> list;
    std::optional<c10::IValue> known, example;
    /// The items of a tuple that mixes tensors and other values.
    std::shared_ptr<std::vector<Snapshot>> tuple;
  };
  /// Tuples that mix tensors and other values, by item.
  std::map<const TSValue *, std::vector<Snapshot>> tuples;
  Snapshot snapshot(const TSValue *v);
  /// Makes `v` stand for what `s` holds (and nothing else).
  void restore(const TSValue *v, const Snapshot &s);
  /// Whether `v` was imported (a tensor, a list or a known value).
  bool defined(const TSValue *v) const;
  /// Imports the nodes of a block.
  using BlockImporter = std::function<void(torch::jit::Block *)>;
  /// prim::If and prim::Loop (ControlFlow.cpp): false, with the error
  /// recorded, when they cannot be resolved at import time.
  bool convertIf(TSNode *node, const BlockImporter &importBlock);
  bool convertLoop(TSNode *node, const BlockImporter &importBlock);

  /// An error about `node`, with its Python source line.
  void error(TSNode *node, const std::string &message);
  std::vector<std::string> errors;
  /// Op kinds without a mapping, with where they are used.
  std::map<std::string, std::vector<std::string>> unsupported;

private:
  bool failedInference = false;
};

/// "file:line" of `node`'s Python source, or "" when unknown.
std::string sourceLine(TSNode *node);

} // namespace mlir::ober::torchscript

#endif // OBER_LIB_IMPORTERS_TORCHSCRIPT_IMPORTER_H
