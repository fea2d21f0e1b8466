//===- CompiledRun.cpp - a function through the CPU pipeline ---------------===//
//
// Part of Ober-Train. The function gets the C interface
// (`_mlir_ciface_<name>`: a pointer to its results' memref descriptors,
// then a pointer to each argument's); each argument is copied into a
// buffer of its element type, each result copied out and its buffer freed
// unless it is an argument's.
//
//===----------------------------------------------------------------------===//

#include "ober/Tools/CompiledRun.h"

#include "ober/Runtime/CPUKernels.h"
#include "ober/Target/CPU/Pipeline.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>
#include <set>

using namespace mlir;
using namespace mlir::ober;
using reference::Tensor;

namespace {

/// Bytes of one element in a memref buffer (i1 takes a byte).
int64_t elementBytes(Type t) {
  return t.isInteger(1) ? 1 : t.getIntOrFloatBitWidth() / 8;
}

const llvm::fltSemantics *semanticsOf(Type t) {
  if (t.isBF16())
    return &llvm::APFloat::BFloat();
  if (t.isF16())
    return &llvm::APFloat::IEEEhalf();
  return nullptr;
}

void store(char *p, Type t, const Tensor &src, int64_t i) {
  if (t.isF32()) {
    float v = static_cast<float>(src.getFloat(i));
    std::memcpy(p, &v, 4);
  } else if (t.isF64()) {
    double v = src.getFloat(i);
    std::memcpy(p, &v, 8);
  } else if (const llvm::fltSemantics *s = semanticsOf(t)) {
    bool lost;
    llvm::APFloat v(src.getFloat(i));
    v.convert(*s, llvm::APFloat::rmNearestTiesToEven, &lost);
    uint16_t bits = v.bitcastToAPInt().getZExtValue();
    std::memcpy(p, &bits, 2);
  } else {
    int64_t v = src.getInt(i);
    std::memcpy(p, &v, elementBytes(t)); // little-endian: the low bytes
  }
}

void load(const char *p, Type t, Tensor &dst, int64_t i) {
  if (t.isF32()) {
    float v;
    std::memcpy(&v, p, 4);
    dst.setFloat(i, v);
  } else if (t.isF64()) {
    double v;
    std::memcpy(&v, p, 8);
    dst.setFloat(i, v);
  } else if (const llvm::fltSemantics *s = semanticsOf(t)) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    llvm::APFloat v(*s, llvm::APInt(16, bits));
    bool lost;
    v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    dst.setFloat(i, v.convertToDouble());
  } else {
    int64_t v = 0;
    std::memcpy(&v, p, elementBytes(t));
    int64_t bits = t.getIntOrFloatBitWidth();
    if (bits < 64 && bits > 1 && (v >> (bits - 1)) & 1)
      v -= int64_t(1) << bits; // sign-extend
    dst.setInt(i, v);
  }
}

/// A memref descriptor of `rank`: allocated and aligned pointers, offset,
/// sizes, strides, one machine word each.
struct Descriptor {
  std::vector<int64_t> words;
  explicit Descriptor(int64_t rank) : words(3 + 2 * rank, 0) {}
};

} // namespace

struct CompiledFunction::Impl {
  std::unique_ptr<ExecutionEngine> engine;
  std::string name;
  SmallVector<RankedTensorType> argTypes, resultTypes;
  Location loc;
};

CompiledFunction::~CompiledFunction() = default;

FailureOr<std::unique_ptr<CompiledFunction>>
CompiledFunction::compile(ModuleOp module, func::FuncOp func,
                          const ConvertOberToLinalgOptions &lowering) {
  MLIRContext *ctx = module.getContext();
  for (Type t : llvm::concat<const Type>(func.getArgumentTypes(),
                                         func.getResultTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape() ||
        !(type.getElementType().isIntOrFloat()))
      return func.emitError("--engine=cpu runs functions of static numeric "
                            "tensors only, got ")
             << t;
  }
  OwningOpRef<ModuleOp> copy = prepareForCodegen(module, func);
  PassManager pm(ctx);
  buildCPUPipeline(pm, lowering);
  if (failed(pm.run(*copy)))
    return failure();

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto optimize = makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(*copy, options);
  if (!engine)
    return func.emitError("--engine=cpu: cannot compile: ")
           << llvm::toString(engine.takeError());
  // Generated code's calls into the kernel library resolve in this process.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    int count = ober_rt_cpu_kernel_symbols(nullptr, nullptr, 0);
    std::vector<const char *> names(count);
    std::vector<void *> addresses(count);
    ober_rt_cpu_kernel_symbols(names.data(), addresses.data(), count);
    for (int i = 0; i < count; ++i)
      symbols[interner(names[i])] = {llvm::orc::ExecutorAddr::fromPtr(addresses[i]),
                                     llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  std::unique_ptr<CompiledFunction> compiled(new CompiledFunction());
  compiled->impl.reset(new Impl{std::move(*engine),
                                ("_mlir_ciface_" + func.getSymName()).str(),
                                {}, {}, func.getLoc()});
  for (Type t : func.getArgumentTypes())
    compiled->impl->argTypes.push_back(cast<RankedTensorType>(t));
  for (Type t : func.getResultTypes())
    compiled->impl->resultTypes.push_back(cast<RankedTensorType>(t));
  return compiled;
}

FailureOr<SmallVector<Tensor>>
CompiledFunction::run(ArrayRef<Tensor> args) {
  // Arguments in buffers of their element types.
  std::vector<std::vector<char>> buffers;
  std::vector<Descriptor> descriptors;
  std::set<const void *> inputs;
  for (auto [t, rt] : llvm::zip(args, impl->argTypes)) {
    Type e = rt.getElementType();
    buffers.emplace_back(std::max<int64_t>(1, rt.getNumElements()) *
                         elementBytes(e));
    char *data = buffers.back().data();
    for (int64_t i = 0; i < rt.getNumElements(); ++i)
      store(data + i * elementBytes(e), e, t, i);
    inputs.insert(data);
    Descriptor d(rt.getRank());
    d.words[0] = d.words[1] = reinterpret_cast<int64_t>(data);
    int64_t stride = 1;
    for (int64_t k = rt.getRank() - 1; k >= 0; --k) {
      d.words[3 + k] = rt.getDimSize(k);
      d.words[3 + rt.getRank() + k] = stride;
      stride *= rt.getDimSize(k);
    }
    descriptors.push_back(std::move(d));
  }
  // Results: consecutive descriptors.
  int64_t resultWords = 0;
  for (RankedTensorType t : impl->resultTypes)
    resultWords += 3 + 2 * t.getRank();
  std::vector<int64_t> resultStorage(std::max<int64_t>(resultWords, 1), 0);
  void *resultPtr = resultStorage.data();
  std::vector<void *> descriptorPtrs;
  for (Descriptor &d : descriptors)
    descriptorPtrs.push_back(d.words.data());
  SmallVector<void *> packed;
  if (!impl->resultTypes.empty())
    packed.push_back(&resultPtr);
  for (void *&p : descriptorPtrs)
    packed.push_back(&p);
  if (llvm::Error error = impl->engine->invokePacked(impl->name, packed))
    return emitError(impl->loc, "--engine=cpu: ")
           << llvm::toString(std::move(error));

  SmallVector<Tensor> results;
  std::set<void *> freed;
  int64_t at = 0;
  for (RankedTensorType rt : impl->resultTypes) {
    Type e = rt.getElementType();
    int64_t rank = rt.getRank();
    auto *alloc = reinterpret_cast<void *>(resultStorage[at]);
    auto *aligned = reinterpret_cast<const char *>(resultStorage[at + 1]);
    int64_t offset = resultStorage[at + 2];
    Tensor out(e, rt.getShape());
    for (int64_t i = 0; i < rt.getNumElements(); ++i) {
      int64_t rem = i, linear = offset;
      for (int64_t k = rank - 1; k >= 0; --k) {
        int64_t size = resultStorage[at + 3 + k];
        linear += (rem % size) * resultStorage[at + 3 + rank + k];
        rem /= size;
      }
      load(aligned + linear * elementBytes(e), e, out, i);
    }
    results.push_back(std::move(out));
    if (!inputs.count(alloc) && freed.insert(alloc).second)
      std::free(alloc);
    at += 3 + 2 * rank;
  }
  return results;
}

FailureOr<SmallVector<Tensor>>
mlir::ober::runCompiled(ModuleOp module, func::FuncOp func,
                        ArrayRef<Tensor> args,
                        const ConvertOberToLinalgOptions &lowering) {
  FailureOr<std::unique_ptr<CompiledFunction>> compiled =
      CompiledFunction::compile(module, func, lowering);
  if (failed(compiled))
    return failure();
  return (*compiled)->run(args);
}
