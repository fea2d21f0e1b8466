//===- TrainStep.cpp - loss, gradients and the optimizer update -----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "GradBuilder.h"
#include "StepBuilder.h"

#include "ober/Dialect/Ober/IR/OberBuilders.h"
#include "ober/Dialect/Ober/IR/OberDialect.h"
#include "ober/Dialect/Ober/IR/TensorSizes.h"
#include "ober/Training/Autodiff.h"
#include "ober/Training/Passes.h"
#include "ober/Training/TrainStep.h"
#include "ober/Transforms/FunctionSelection.h"
#include "ober/Transforms/RefineShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <limits>

namespace mlir::ober {
#define GEN_PASS_DEF_AUTODIFFPASS
#define GEN_PASS_DEF_BUILDTRAINSTEPPASS
#include "ober/Training/Passes.h.inc"
} // namespace mlir::ober

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::training;

namespace {

struct AutodiffPass : mlir::ober::impl::AutodiffPassBase<AutodiffPass> {
  using AutodiffPassBase::AutodiffPassBase;
  void runOnOperation() override {
    func::FuncOp f = selectFunction(getOperation(), function, "function=");
    if (!f || failed(buildGradientFunction(f, (f.getSymName() + "_grad").str(),
                                           parameterArguments(f))))
      signalPassFailure();
  }
};

/// `v` as printf's %g writes it.
std::string shortest(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// The largest scale dynamic loss scaling uses: the largest power of two
/// f16 holds, since the scale seeds the backward pass in the compute type.
constexpr int kMaxLossScaleLog2 = 15;

/// A dropout that cannot draw by its samples' place in the step's batch
/// draws from seed + (first sample) * kMicroBatchSeedStride: models offset
/// the seed by small site indices (one stream per dropout site), so no
/// micro-batch's stream meets another's.
constexpr int64_t kMicroBatchSeedStride = int64_t(1) << 32;

/// Makes every dropout of loss function `fn` draw by the element's index in
/// the step's whole batch, so that the masks do not depend on how the batch
/// is cut into micro-batches (nor, with the partitioner's offsets, into
/// devices): `fn` takes the micro-batch's first sample
/// (kSampleOffsetAttrName; 0 with one micro-batch). A dropout whose input
/// has the samples as the major part of one dimension shifts its index by
/// their rows there (`offsets` within its own shape), that dimension
/// counted first (`major_dim`); any other (samples merged as the minor part
/// of a dimension) draws its own stream per micro-batch from the seed.
void indexDropoutsBySample(func::FuncOp fn) {
  SmallVector<DropoutOp> dropouts;
  fn.walk([&](DropoutOp d) {
    if (!d.getOffsets() && !d.getRatio().isZero())
      dropouts.push_back(d);
  });
  if (dropouts.empty())
    return;
  Block &body = fn.getBody().front();
  OpBuilder b(fn.getContext());
  Type i64 = b.getI64Type();
  auto scalar = RankedTensorType::get({}, i64);
  SmallVector<std::pair<BlockArgument, BatchAt>> samples;
  for (unsigned i : sampleArguments(fn)) {
    int64_t n = cast<RankedTensorType>(fn.getArgumentTypes()[i]).getDimSize(0);
    samples.push_back({body.getArgument(i), {0, 1, n, n}});
  }
  DenseMap<Value, BatchAt> batch = followBatch(body, samples);
  unsigned index = fn.getNumArguments();
  if (failed(fn.insertArgument(
          index, scalar,
          b.getDictionaryAttr(b.getNamedAttr(OberDialect::kSampleOffsetAttrName,
                                             b.getUnitAttr())),
          fn.getLoc())))
    return;
  BlockArgument first = fn.getArgument(index);
  for (DropoutOp d : dropouts) {
    b.setInsertionPoint(d);
    Location loc = d.getLoc();
    RankedTensorType type = d.getInput().getType();
    auto at = batch.find(d.getInput());
    if (at != batch.end() && at->second.groups == 1 && type.hasStaticShape()) {
      // Dimension k is [samples] x [rows per sample].
      int64_t k = at->second.dim;
      SmallVector<int64_t> rows(type.getRank(), 0);
      rows[k] = type.getDimSize(k) / at->second.from;
      if (k != 0)
        d.setMajorDim(k);
      auto vector = RankedTensorType::get({type.getRank()}, i64);
      Value unit = ConstantOp::create(
          b, loc, DenseElementsAttr::get(vector, ArrayRef<int64_t>(rows)));
      d.getOffsetsMutable().assign(
          MulOp::create(b, loc, vector, unit, first).getResult());
      d.setGlobalShape(type.getShape());
      continue;
    }
    Value stride = createScalarConstant(b, loc, i64,
                                        static_cast<double>(kMicroBatchSeedStride));
    Value shift = MulOp::create(b, loc, scalar, first, stride);
    d.getSeedMutable().assign(
        AddOp::create(b, loc, scalar, d.getSeed(), shift).getResult());
  }
}

} // namespace

FailureOr<func::FuncOp>
mlir::ober::training::buildLossFunction(func::FuncOp forward, StepOptions &o) {
  FunctionType type = forward.getFunctionType();
  if (type.getNumResults() == 0)
    return forward.emitError("ober-build-train-step: the function has no "
                             "result to train");
  auto out = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!out || !isa<FloatType>(out.getElementType()) || !out.hasStaticShape()) {
    InFlightDiagnostic error =
        forward.emitError("ober-build-train-step: the first result must "
                          "be a static float tensor, got ")
        << type.getResult(0);
    if (out && isa<FloatType>(out.getElementType()))
      error << " (" << kOpenDimensionHint << ")";
    return error;
  }
  if (o.loss == "auto")
    o.loss = out.getRank() == 0 ? "output" : "cross-entropy";
  Type target;
  if (o.loss == "cross-entropy") {
    if (out.getRank() < 1)
      return forward.emitError("ober-build-train-step: cross-entropy needs "
                               "logits [..., classes], got ")
             << out;
    target = RankedTensorType::get(out.getShape().drop_back(),
                                   IntegerType::get(forward.getContext(), 64));
  } else if (o.loss == "mse") {
    target = out;
  } else if (o.loss == "output") {
    if (out.getRank() != 0)
      return forward.emitError("ober-build-train-step: loss=output needs a "
                               "scalar first result, got ")
             << out;
  } else {
    return forward.emitError("ober-build-train-step: unknown loss '")
           << o.loss << "' (cross-entropy, mse, output, auto)";
  }
  SmallVector<Type> inputs(type.getInputs());
  if (target)
    inputs.push_back(target);
  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto fn = func::FuncOp::create(
      b, forward.getLoc(), (forward.getSymName() + "_loss").str(),
      b.getFunctionType(inputs, RankedTensorType::get({}, out.getElementType())));
  fn.setPrivate();
  if (ArrayAttr args = forward.getAllArgAttrs()) {
    SmallVector<Attribute> attrs(args.begin(), args.end());
    if (target)
      attrs.push_back(b.getDictionaryAttr({}));
    fn.setAllArgAttrs(attrs);
  }
  IRMapping mapping;
  forward.getBody().cloneInto(&fn.getBody(), mapping);
  Block &body = fn.getBody().front();
  Value targetArg = target ? body.addArgument(target, forward.getLoc()) : Value();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  Value logits = ret.getOperand(0), loss = logits;
  Location loc = forward.getLoc();
  auto mean = LossReductionAttr::get(b.getContext(), LossReduction::mean);
  if (o.loss == "cross-entropy")
    loss = CrossEntropyOp::create(b, loc, logits, targetArg, mean,
                                  b.getF64FloatAttr(o.labelSmoothing),
                                  IntegerAttr());
  else if (o.loss == "mse")
    loss = MSELossOp::create(b, loc, logits, targetArg, mean);
  // Running statistics of training-mode batch norms over parameters
  // (buffers): the loss function also returns their new values, and records
  // which argument each one replaces.
  SmallVector<Value> results = {loss};
  SmallVector<int64_t> updated;
  fn.walk([&](BatchNormTrainingOp bn) {
    for (unsigned k : {3u, 4u}) {
      auto arg = dyn_cast<BlockArgument>(bn->getOperand(k));
      if (!arg || !fn.getArgAttr(arg.getArgNumber(),
                                 OberDialect::kParamAttrName) ||
          llvm::is_contained(updated, arg.getArgNumber()))
        continue;
      updated.push_back(arg.getArgNumber());
      results.push_back(bn->getResult(k - 2));
    }
  });
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  fn.setFunctionType(b.getFunctionType(fn.getArgumentTypes(),
                                       ValueRange(results).getTypes()));
  if (!updated.empty())
    fn->setAttr("ober.buffer_updates", b.getDenseI64ArrayAttr(updated));
  indexDropoutsBySample(fn);
  SymbolTable(forward->getParentOfType<ModuleOp>()).insert(fn);
  return fn;
}

SmallVector<unsigned>
mlir::ober::training::sampleArguments(func::FuncOp lossFn) {
  SmallVector<unsigned> samples;
  std::optional<int64_t> batch;
  for (unsigned i = 0; i < lossFn.getNumArguments(); ++i) {
    auto t = dyn_cast<RankedTensorType>(lossFn.getArgumentTypes()[i]);
    if (lossFn.getArgAttr(i, OberDialect::kParamAttrName) || !t ||
        t.getRank() == 0)
      continue;
    if (!batch)
      batch = t.getDimSize(0);
    if (t.getDimSize(0) == *batch)
      samples.push_back(i);
  }
  return samples;
}

/// The names of `ober.train_step`'s entries, one per option.
namespace keys {
constexpr StringLiteral kLoss = "loss", kOptimizer = "optimizer",
                        kMomentum = "momentum", kNesterov = "nesterov",
                        kBeta1 = "beta1", kBeta2 = "beta2", kEps = "eps",
                        kWeightDecay = "weight_decay",
                        kLabelSmoothing = "label_smoothing",
                        kClipNorm = "clip_norm", kGradNorm = "grad_norm",
                        kMicroBatches = "micro_batches",
                        kLossScale = "loss_scale",
                        kLossScaleInit = "loss_scale_init",
                        kLossScaleWindow = "loss_scale_window",
                        kFusedAttention = "fused_attention",
                        kLossFunction = "loss_function";
} // namespace keys

/// `ober.train_step`: the options (weight decay resolved) and the loss
/// function the step differentiates.
static DictionaryAttr stepAttribute(Builder &b, const StepOptions &o, double wd,
                                    func::FuncOp lossFn) {
  using namespace keys;
  return b.getDictionaryAttr({
      b.getNamedAttr(kLoss, b.getStringAttr(o.loss)),
      b.getNamedAttr(kOptimizer, b.getStringAttr(o.optimizer)),
      b.getNamedAttr("lr", b.getStringAttr("input")),
      b.getNamedAttr(kMomentum, b.getF64FloatAttr(o.momentum)),
      b.getNamedAttr(kNesterov, b.getBoolAttr(o.nesterov)),
      b.getNamedAttr(kBeta1, b.getF64FloatAttr(o.beta1)),
      b.getNamedAttr(kBeta2, b.getF64FloatAttr(o.beta2)),
      b.getNamedAttr(kEps, b.getF64FloatAttr(o.eps)),
      b.getNamedAttr(kWeightDecay, b.getF64FloatAttr(wd)),
      b.getNamedAttr(kLabelSmoothing, b.getF64FloatAttr(o.labelSmoothing)),
      b.getNamedAttr(kClipNorm, b.getF64FloatAttr(o.clipNorm)),
      b.getNamedAttr(kGradNorm, b.getBoolAttr(o.gradNorm)),
      b.getNamedAttr(kMicroBatches, b.getI64IntegerAttr(o.microBatches)),
      b.getNamedAttr(kLossScale, b.getStringAttr(o.lossScale)),
      b.getNamedAttr(kLossScaleInit, b.getF64FloatAttr(o.lossScaleInit)),
      b.getNamedAttr(kLossScaleWindow, b.getI64IntegerAttr(o.lossScaleWindow)),
      b.getNamedAttr(kFusedAttention, b.getBoolAttr(o.fusedAttention)),
      b.getNamedAttr(kLossFunction,
                     FlatSymbolRefAttr::get(lossFn.getSymNameAttr())),
  });
}

/// Entry `key` of `attr` into `out`; false when it has none of that kind.
static bool readEntry(DictionaryAttr attr, StringRef key, std::string &out) {
  auto v = attr.getAs<StringAttr>(key);
  if (v)
    out = v.getValue().str();
  return static_cast<bool>(v);
}
static bool readEntry(DictionaryAttr attr, StringRef key, double &out) {
  auto v = attr.getAs<FloatAttr>(key);
  if (v)
    out = v.getValueAsDouble();
  return static_cast<bool>(v);
}
static bool readEntry(DictionaryAttr attr, StringRef key, int64_t &out) {
  auto v = attr.getAs<IntegerAttr>(key);
  if (v)
    out = v.getInt();
  return static_cast<bool>(v);
}
static bool readEntry(DictionaryAttr attr, StringRef key, bool &out) {
  auto v = attr.getAs<BoolAttr>(key);
  if (v)
    out = v.getValue();
  return static_cast<bool>(v);
}

FailureOr<StepOptions>
mlir::ober::training::readStepOptions(func::FuncOp step) {
  using namespace keys;
  auto attr =
      step->getAttrOfType<DictionaryAttr>(OberDialect::kTrainStepAttrName);
  if (!attr)
    return step.emitError("not a train step: no '")
           << OberDialect::kTrainStepAttrName << "'";
  StepOptions o;
  StringRef absent; // the first entry missing
  auto get = [&](StringRef key, auto &out) {
    if (!readEntry(attr, key, out) && absent.empty())
      absent = key;
  };
  get(kLoss, o.loss);
  get(kOptimizer, o.optimizer);
  get(kMomentum, o.momentum);
  get(kNesterov, o.nesterov);
  get(kBeta1, o.beta1);
  get(kBeta2, o.beta2);
  get(kEps, o.eps);
  get(kWeightDecay, o.weightDecay);
  get(kLabelSmoothing, o.labelSmoothing);
  get(kClipNorm, o.clipNorm);
  get(kMicroBatches, o.microBatches);
  get(kLossScale, o.lossScale);
  get(kLossScaleInit, o.lossScaleInit);
  get(kLossScaleWindow, o.lossScaleWindow);
  readEntry(attr, kGradNorm, o.gradNorm); // optional: false when absent
  readEntry(attr, kFusedAttention, o.fusedAttention); // likewise
  if (!absent.empty())
    return step.emitError("'")
           << OberDialect::kTrainStepAttrName << "' has no '" << absent
           << "' (build the step with --ober-build-train-step)";
  return o;
}

bool mlir::ober::returnsGradNorm(func::FuncOp step) {
  auto attr =
      step->getAttrOfType<DictionaryAttr>(OberDialect::kTrainStepAttrName);
  auto g = attr ? attr.getAs<BoolAttr>(keys::kGradNorm) : nullptr;
  return g && g.getValue();
}

int64_t mlir::ober::microBatchesOf(func::FuncOp step) {
  auto attr =
      step->getAttrOfType<DictionaryAttr>(OberDialect::kTrainStepAttrName);
  auto m = attr ? attr.getAs<IntegerAttr>(keys::kMicroBatches) : nullptr;
  return m ? m.getInt() : 1;
}

Operation *mlir::ober::microBatchLoopOf(func::FuncOp step) {
  if (step.isExternal())
    return nullptr;
  for (auto loop : step.getBody().front().getOps<scf::ForOp>()) {
    std::optional<int64_t> stride = getConstantIntValue(loop.getStep());
    if (getConstantIntValue(loop.getLowerBound()) &&
        getConstantIntValue(loop.getUpperBound()) && stride && *stride > 0)
      return loop;
  }
  return nullptr;
}

func::FuncOp mlir::ober::lossFunctionOf(func::FuncOp step) {
  auto attr =
      step->getAttrOfType<DictionaryAttr>(OberDialect::kTrainStepAttrName);
  auto ref = attr ? attr.getAs<FlatSymbolRefAttr>(keys::kLossFunction)
                  : FlatSymbolRefAttr();
  return ref ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(step, ref)
             : func::FuncOp();
}

FailureOr<func::FuncOp> mlir::ober::training::buildStep(func::FuncOp lossFn,
                                                        func::FuncOp grad,
                                                        const StepOptions &o) {
  MLIRContext *ctx = lossFn.getContext();
  SmallVector<unsigned> params = parameterArguments(lossFn);
  SmallVector<unsigned> data;
  std::optional<unsigned> sampleOffset;
  for (unsigned i = 0; i < lossFn.getNumArguments(); ++i) {
    if (lossFn.getArgAttr(i, OberDialect::kSampleOffsetAttrName))
      sampleOffset = i;
    else if (!llvm::is_contained(params, i))
      data.push_back(i);
  }
  if (params.empty())
    return lossFn.emitError("ober-build-train-step: the model has no "
                            "parameters (arguments tagged ober.param)");
  bool adam = o.optimizer == "adam" || o.optimizer == "adamw";
  if (!adam && o.optimizer != "sgd")
    return lossFn.emitError("ober-build-train-step: unknown optimizer '")
           << o.optimizer << "' (sgd, adam, adamw)";
  if (o.microBatches < 1)
    return lossFn.emitError("ober-build-train-step: micro-batches must be >= 1");
  double wd = o.weightDecay >= 0 ? o.weightDecay
                                 : (o.optimizer == "adamw" ? 0.01 : 0.0);
  bool sgdMomentum = !adam && o.momentum != 0.0;
  bool scaling = o.lossScale == "dynamic";
  if (!scaling && o.lossScale != "none")
    return lossFn.emitError("ober-build-train-step: loss-scale='")
           << o.lossScale << "' is not one of none, dynamic";
  int initLog2 = scaling ? std::ilogb(o.lossScaleInit) : 0;
  if (scaling && (o.lossScaleInit <= 0 ||
                  std::ldexp(1.0, initLog2) != o.lossScaleInit ||
                  initLog2 > kMaxLossScaleLog2 || initLog2 < -126))
    return lossFn.emitError("ober-build-train-step: loss-scale-init=")
           << shortest(o.lossScaleInit) << " must be a power of two from 2^-126 to 2^"
           << kMaxLossScaleLog2 << " (the largest f16 holds)";
  if (scaling && o.lossScaleWindow < 1)
    return lossFn.emitError("ober-build-train-step: loss-scale-window=")
           << o.lossScaleWindow << " must be >= 1";

  Builder b(ctx);
  auto paramName = [&](unsigned i) {
    return lossFn.getArgAttrOfType<StringAttr>(i, OberDialect::kParamAttrName)
        .getValue();
  };
  // Signature: params, state, batch, lr.
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  auto tag = [&](Type t, StringRef key, Attribute value) {
    types.push_back(t);
    attrs.push_back(b.getDictionaryAttr(b.getNamedAttr(key, value)));
  };
  for (unsigned i : params)
    tag(lossFn.getArgumentTypes()[i], OberDialect::kParamAttrName,
        b.getStringAttr(paramName(i)));
  auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
  SmallVector<std::string> slots;
  if (adam)
    slots = {"exp_avg", "exp_avg_sq"};
  else if (sgdMomentum)
    slots = {"momentum_buffer"};
  for (const std::string &slot : slots)
    for (unsigned i : params)
      tag(lossFn.getArgumentTypes()[i], "ober.state",
          b.getStringAttr((paramName(i) + "." + slot).str()));
  if (adam)
    tag(f32Scalar, "ober.state", b.getStringAttr("step"));
  // Loss scaling: log2 of the scale relative to the first one, and the
  // overflow-free steps since it last changed (both start at zero).
  if (scaling) {
    tag(f32Scalar, "ober.state", b.getStringAttr("loss_scale.log2"));
    tag(f32Scalar, "ober.state", b.getStringAttr("loss_scale.good_steps"));
  }
  // Inputs holding samples take a leading micro-batch dimension; others (a
  // dropout seed) are the same for every micro-batch.
  SmallVector<unsigned> samples = sampleArguments(lossFn);
  auto isSample = [&](unsigned i) { return llvm::is_contained(samples, i); };
  int64_t microBatchSize =
      samples.empty() ? 1
                      : cast<RankedTensorType>(
                            lossFn.getArgumentTypes()[samples.front()])
                            .getDimSize(0);
  unsigned numBatch = 0;
  for (unsigned i : data) {
    auto t = cast<RankedTensorType>(lossFn.getArgumentTypes()[i]);
    if (o.microBatches > 1 && isSample(i)) {
      SmallVector<int64_t> shape = {o.microBatches};
      llvm::append_range(shape, t.getShape());
      t = t.clone(shape);
    }
    // The target is the last argument before the sample offset.
    bool isTarget = i + 1 + (sampleOffset ? 1 : 0) == lossFn.getNumArguments() &&
                    o.loss != "output";
    tag(t,
        isSample(i) ? OberDialect::kBatchAttrName : OberDialect::kInputAttrName,
        b.getStringAttr(isTarget ? std::string("target")
                                 : "input" + std::to_string(numBatch)));
    ++numBatch;
  }
  tag(f32Scalar, "ober.lr", b.getUnitAttr());

  OpBuilder builder(grad);
  builder.setInsertionPointAfter(grad);
  Location loc = lossFn.getLoc();
  SmallVector<Type> results;
  for (unsigned i : params)
    results.push_back(lossFn.getArgumentTypes()[i]);
  for (size_t s = 0; s < slots.size(); ++s)
    for (unsigned i : params)
      results.push_back(lossFn.getArgumentTypes()[i]);
  if (adam)
    results.push_back(f32Scalar);
  if (scaling)
    results.append({f32Scalar, f32Scalar});
  Type lossType = grad.getFunctionType().getResult(0);
  results.push_back(lossType);
  if (o.gradNorm)
    results.push_back(f32Scalar);
  auto step = func::FuncOp::create(builder, loc, "train_step",
                                   builder.getFunctionType(types, results));
  step.setAllArgAttrs(ArrayRef<DictionaryAttr>(attrs));
  step->setAttr(OberDialect::kTrainStepAttrName,
                stepAttribute(b, o, wd, lossFn));
  Block *body = step.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  GradBuilder gb(builder, loc);

  size_t np = params.size();
  auto paramArg = [&](size_t k) { return body->getArgument(k); };
  auto stateArg = [&](size_t slot, size_t k) {
    return body->getArgument(np * (1 + slot) + k);
  };
  size_t scaleStart = np * (1 + slots.size()) + (adam ? 1 : 0);
  size_t batchStart = scaleStart + (scaling ? 2 : 0);
  Type f32 = builder.getF32Type();
  // The scale: 2^(log2 of the first + the state's offset).
  Value scaleLog2, goodSteps, scale;
  if (scaling) {
    scaleLog2 = body->getArgument(scaleStart);
    goodSteps = body->getArgument(scaleStart + 1);
    scale = gb.create<PowOp>(
        gb.scalar(f32, 2.0),
        gb.create<AddOp>(scaleLog2, gb.scalar(f32, initLog2)));
  }
  Value lr = body->getArgument(body->getNumArguments() - 1);

  // Forward and backward over each micro-batch; average loss and gradients.
  // Buffers (batch-norm running statistics) update after every micro-batch.
  SmallVector<int64_t> updates;
  if (auto attr = lossFn->getAttrOfType<DenseI64ArrayAttr>("ober.buffer_updates"))
    updates.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
  SmallVector<Value> current;
  for (size_t k = 0; k < np; ++k)
    current.push_back(paramArg(k));
  Value loss;
  SmallVector<Value> grads(np);
  // One micro-batch's forward and backward (`index`: which one, a rank-0
  // i64; null when the step has one), added to `loss` and `grads`.
  auto microBatch = [&](Value index) {
    SmallVector<Value> callArgs(lossFn.getNumArguments());
    for (auto [k, i] : llvm::enumerate(params))
      callArgs[i] = current[k];
    for (auto [k, i] : llvm::enumerate(data)) {
      Value v = body->getArgument(batchStart + k);
      if (index && isSample(i))
        v = gb.create<GatherOp>(v, index, builder.getI64IntegerAttr(0));
      callArgs[i] = v;
    }
    // The micro-batch's first sample, which its dropouts draw by.
    if (sampleOffset)
      callArgs[*sampleOffset] =
          index ? gb.create<MulOp>(index, gb.scalar(builder.getI64Type(),
                                                    microBatchSize))
                : gb.scalar(builder.getI64Type(), 0);
    if (scaling)
      callArgs.push_back(scale);
    auto call = func::CallOp::create(builder, loc, grad, callArgs);
    Value l = call.getResult(0);
    loss = loss ? gb.create<AddOp>(loss, l) : l;
    for (auto [j, arg] : llvm::enumerate(updates)) {
      auto *it = llvm::find(params, static_cast<unsigned>(arg));
      current[it - params.begin()] = call.getResult(1 + j);
    }
    for (size_t k = 0; k < np; ++k) {
      Value g = call.getResult(grad.getFunctionType().getNumResults() - np + k);
      grads[k] = grads[k] ? gb.create<AddOp>(grads[k], g) : g;
    }
  };
  if (o.microBatches == 1) {
    microBatch(Value());
  } else {
    // A loop over the micro-batches carrying their index, the buffers, and
    // the sums of the losses and gradients (from zeros).
    Type i64 = builder.getI64Type();
    ArrayRef<Type> gradTypes =
        grad.getFunctionType().getResults().take_back(np);
    SmallVector<size_t> buffers;
    for (int64_t arg : updates)
      buffers.push_back(llvm::find(params, static_cast<unsigned>(arg)) -
                        params.begin());
    SmallVector<Value> init = {gb.scalar(i64, 0)};
    for (size_t k : buffers)
      init.push_back(current[k]);
    init.push_back(gb.zerosLike(lossType));
    for (Type t : gradTypes)
      init.push_back(gb.zerosLike(t));
    auto bound = [&](int64_t v) {
      return arith::ConstantIndexOp::create(builder, loc, v);
    };
    auto loop = scf::ForOp::create(builder, loc, bound(0),
                                   bound(o.microBatches), bound(1), init);
    // Where the carried values sit: index, buffers, loss, gradients.
    size_t lossAt = 1 + buffers.size(), gradsAt = lossAt + 1;
    auto unpack = [&](ValueRange values) {
      for (auto [j, k] : llvm::enumerate(buffers))
        current[k] = values[1 + j];
      loss = values[lossAt];
      for (size_t k = 0; k < np; ++k)
        grads[k] = values[gradsAt + k];
    };
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(loop.getBody());
      unpack(loop.getRegionIterArgs());
      Value index = loop.getRegionIterArgs()[0];
      microBatch(index);
      SmallVector<Value> next = {gb.create<AddOp>(index, gb.scalar(i64, 1))};
      for (size_t k : buffers)
        next.push_back(current[k]);
      next.push_back(loss);
      llvm::append_range(next, grads);
      scf::YieldOp::create(builder, loc, next);
    }
    unpack(loop.getResults());
  }
  if (o.microBatches > 1) {
    loss = gb.create<DivOp>(loss, gb.scalarLike(loss, o.microBatches));
    for (Value &g : grads)
      g = gb.create<DivOp>(g, gb.scalarLike(g, o.microBatches));
  }

  // Every gradient scaled by an f32 scalar, and an f32 sum over all
  // gradients of `f` of each.
  auto scaleGradients = [&](Value factor) {
    for (Value &g : grads)
      g = gb.create<MulOp>(g, gb.cast(factor, typeOf(g).getElementType()));
  };
  auto sumOverGradients = [&](llvm::function_ref<Value(Value)> f) {
    Value total;
    for (Value g : grads) {
      SmallVector<int64_t> all =
          llvm::to_vector(llvm::seq<int64_t>(0, typeOf(g).getRank()));
      Value part = gb.cast(gb.sum(f(g), all, false), f32);
      total = total ? gb.create<AddOp>(total, part) : part;
    }
    return total;
  };

  // Loss scaling: unscale (exact: a power of two), and find whether any
  // gradient overflowed (x * 0 is NaN exactly for inf and NaN).
  Value finite;
  if (scaling) {
    scaleGradients(gb.create<DivOp>(gb.scalar(f32, 1.0), scale));
    Value probe = sumOverGradients(
        [&](Value g) { return gb.create<MulOp>(g, gb.scalarLike(g, 0.0)); });
    finite = gb.create<CompareOp>(CompareDirection::eq, probe,
                                  gb.scalar(f32, 0.0));
  }

  // The global norm, reported and for clipping (PyTorch's
  // clip_grad_norm_).
  Value norm;
  if (o.clipNorm > 0 || o.gradNorm)
    norm = gb.create<SqrtOp>(
        sumOverGradients([&](Value g) { return gb.create<MulOp>(g, g); }));
  if (o.clipNorm > 0) {
    Value coef = gb.create<DivOp>(gb.scalar(f32, o.clipNorm),
                                  gb.create<AddOp>(norm, gb.scalar(f32, 1e-6)));
    scaleGradients(gb.create<MinOp>(coef, gb.scalar(f32, 1.0)));
  }

  // The update.
  SmallVector<Value> newParams, newState[2];
  Value t, bc1, bc2;
  if (adam) {
    Value stepArg = body->getArgument(np * 3);
    t = gb.create<AddOp>(stepArg, gb.scalar(builder.getF32Type(), 1.0));
    auto correction = [&](double beta) {
      Value pow = gb.create<PowOp>(gb.scalar(builder.getF32Type(), beta), t);
      return gb.create<SubOp>(gb.scalar(builder.getF32Type(), 1.0), pow);
    };
    bc1 = correction(o.beta1);
    bc2 = correction(o.beta2);
  }
  SmallVector<int64_t> frozen;
  if (auto attr = grad->getAttrOfType<DenseI64ArrayAttr>("ober.no_gradient"))
    frozen.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
  for (size_t k = 0; k < np; ++k) {
    Value p = paramArg(k), g = grads[k];
    Type et = typeOf(p).getElementType();
    if (llvm::is_contained(frozen, static_cast<int64_t>(k))) {
      // No path to the loss: a buffer (updated by its op, if at all).
      newParams.push_back(current[k]);
      for (size_t slot = 0; slot < slots.size(); ++slot)
        newState[slot].push_back(stateArg(slot, k));
      continue;
    }
    Value lrT = gb.cast(lr, et);
    auto c = [&](double v) { return gb.scalar(et, v); };
    auto mul = [&](Value a, Value b2) { return gb.create<MulOp>(a, b2); };
    auto add = [&](Value a, Value b2) { return gb.create<AddOp>(a, b2); };
    if (wd != 0 && o.optimizer != "adamw")
      g = add(g, mul(p, c(wd)));
    if (adam) {
      if (o.optimizer == "adamw" && wd != 0)
        p = mul(p, gb.create<SubOp>(c(1.0), mul(lrT, c(wd))));
      Value m = add(mul(stateArg(0, k), c(o.beta1)), mul(g, c(1 - o.beta1)));
      Value v = add(mul(stateArg(1, k), c(o.beta2)),
                    mul(mul(g, g), c(1 - o.beta2)));
      Value denom = add(gb.create<DivOp>(gb.create<SqrtOp>(v),
                                         gb.create<SqrtOp>(gb.cast(bc2, et))),
                        c(o.eps));
      Value stepSize = gb.create<DivOp>(lrT, gb.cast(bc1, et));
      p = gb.create<SubOp>(p, mul(stepSize, gb.create<DivOp>(m, denom)));
      newState[0].push_back(m);
      newState[1].push_back(v);
    } else {
      Value d = g;
      if (sgdMomentum) {
        Value buf = add(mul(stateArg(0, k), c(o.momentum)), g);
        newState[0].push_back(buf);
        d = o.nesterov ? add(g, mul(buf, c(o.momentum))) : buf;
      }
      p = gb.create<SubOp>(p, mul(lrT, d));
    }
    newParams.push_back(p);
  }
  SmallVector<Value> rets(newParams);
  for (size_t s = 0; s < slots.size(); ++s)
    llvm::append_range(rets, newState[s]);
  if (adam)
    rets.push_back(t);
  if (scaling) {
    // A step with an overflow changes nothing but halves the scale; after
    // `window` clean steps the scale doubles (PyTorch's GradScaler).
    unsigned numOld = rets.size();
    for (unsigned r = 0; r < numOld; ++r)
      rets[r] = gb.create<SelectOp>(finite, rets[r], body->getArgument(r));
    Value good = gb.create<AddOp>(goodSteps, gb.scalar(f32, 1.0));
    Value grow = gb.create<AndOp>(
        gb.create<CompareOp>(CompareDirection::ge, good,
                             gb.scalar(f32, o.lossScaleWindow)),
        gb.create<CompareOp>(CompareDirection::lt, scaleLog2,
                             gb.scalar(f32, kMaxLossScaleLog2 - initLog2)));
    Value one = gb.scalar(f32, 1.0), zero = gb.scalar(f32, 0.0);
    rets.push_back(gb.create<SelectOp>(
        finite,
        gb.create<SelectOp>(grow, gb.create<AddOp>(scaleLog2, one), scaleLog2),
        gb.create<SubOp>(scaleLog2, one)));
    rets.push_back(gb.create<SelectOp>(
        finite, gb.create<SelectOp>(grow, zero, good), zero));
  }
  rets.push_back(loss);
  if (o.gradNorm)
    rets.push_back(norm);
  func::ReturnOp::create(builder, loc, rets);
  SymbolTable(lossFn->getParentOfType<ModuleOp>()).insert(step);
  if (failed(verify(step)))
    return failure();
  return step;
}

FailureOr<func::FuncOp>
mlir::ober::training::buildGradientAndStep(func::FuncOp lossFn,
                                           const StepOptions &o) {
  FailureOr<func::FuncOp> grad = buildGradientFunction(
      lossFn, (lossFn.getSymName() + "_grad").str(), parameterArguments(lossFn),
      o.lossScale == "dynamic", o.fusedAttention);
  if (failed(grad))
    return failure();
  grad->setPrivate();
  return buildStep(lossFn, *grad, o);
}

/// Warns, once for `forward`, about the parameters its model's export
/// changed (ober.export_note): training them trains another model.
static void warnAboutExportNotes(func::FuncOp forward) {
  SmallVector<std::string> notes;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (auto note = forward.getArgAttrOfType<StringAttr>(
            i, OberDialect::kExportNoteAttrName))
      if (auto name = forward.getArgAttrOfType<StringAttr>(
              i, OberDialect::kParamAttrName))
        notes.push_back(("'" + name.getValue() + "': " + note.getValue()).str());
  if (notes.empty())
    return;
  constexpr size_t kListed = 8;
  InFlightDiagnostic warning = forward.emitWarning()
      << "the model's export changed " << notes.size()
      << " of its parameters; the step trains them as the file has them, "
         "not as the module had them (export for training: ober.export, or "
         "torch.onnx.export(..., do_constant_folding=False, "
         "training=torch.onnx.TrainingMode.TRAINING); see docs/Training.md)";
  for (size_t k = 0; k < notes.size() && k < kListed; ++k)
    warning.attachNote() << notes[k];
  if (notes.size() > kListed)
    warning.attachNote() << "and " << notes.size() - kListed << " more";
}

/// Refuses hyperparameters outside the ranges PyTorch's losses and
/// optimizers accept (a label smoothing past 1 would fail in the loss op's
/// verifier; a negative eps or a beta of 1 would train on nonsense).
static LogicalResult checkHyperparameters(const StepOptions &o,
                                          func::FuncOp at) {
  struct Range {
    const char *name;
    double value, low, high;
    bool highIncluded;
  };
  double inf = std::numeric_limits<double>::infinity();
  Range ranges[] = {{"label-smoothing", o.labelSmoothing, 0, 1, true},
                    {"momentum", o.momentum, 0, inf, false},
                    {"beta1", o.beta1, 0, 1, false},
                    {"beta2", o.beta2, 0, 1, false},
                    {"eps", o.eps, 0, inf, false},
                    {"clip-norm", o.clipNorm, 0, inf, false}};
  for (const Range &r : ranges)
    if (!(r.value >= r.low &&
          (r.highIncluded ? r.value <= r.high : r.value < r.high)))
      return at.emitError("ober-build-train-step: ")
             << r.name << "=" << shortest(r.value) << " must be in ["
             << shortest(r.low) << ", "
             << (r.high == inf ? std::string("inf") : shortest(r.high))
             << (r.highIncluded ? "]" : ")");
  // weight-decay's default (-1) stands for the optimizer's own.
  if (o.weightDecay != -1.0 && !(o.weightDecay >= 0 && o.weightDecay < inf))
    return at.emitError("ober-build-train-step: weight-decay=")
           << shortest(o.weightDecay)
           << " must be >= 0 (leave it out for the optimizer's default)";
  return success();
}

namespace {

struct BuildTrainStepPass
    : mlir::ober::impl::BuildTrainStepPassBase<BuildTrainStepPass> {
  using BuildTrainStepPassBase::BuildTrainStepPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp forward = selectFunction(module, function, "function=");
    if (!forward || failed(verifyTensorSizes(forward)))
      return signalPassFailure();
    warnAboutExportNotes(forward);
    StepOptions o{loss,           optimizer, momentum,  beta1,
                  beta2,          eps,       weightDecay,
                  labelSmoothing, clipNorm,  nesterov,  gradNorm,
                  microBatches,   lossScale, lossScaleInit, lossScaleWindow,
                  fusedAttention};
    if (failed(checkHyperparameters(o, forward)))
      return signalPassFailure();
    FailureOr<func::FuncOp> lossFn = buildLossFunction(forward, o);
    if (failed(lossFn))
      return signalPassFailure();
    if (failed(buildGradientAndStep(*lossFn, o)))
      return signalPassFailure();
  }
};

} // namespace
