//===- Tensor.cpp - tensors of the reference interpreter ------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Reference/Tensor.h"

#include "ober/Runtime/DType.h"

#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace mlir::ober::reference;

/// bf16 by the runtime's rounding (ober/Runtime/DType.h).
static double roundToBF16(double v) {
  uint16_t bits;
  ::ober::rt::storeFloat(::ober::rt::DType::BF16, &bits, v);
  return ::ober::rt::loadFloat(::ober::rt::DType::BF16, &bits);
}

double mlir::ober::reference::roundToFloat(Type elementType, double v) {
  if (elementType.isF64())
    return v;
  if (elementType.isF32())
    return static_cast<float>(v);
  if (elementType.isF16())
    return static_cast<double>(static_cast<_Float16>(v));
  if (elementType.isBF16())
    return roundToBF16(v);
  // Any other float type: go through APFloat.
  llvm::APFloat f(v);
  bool losesInfo;
  f.convert(cast<FloatType>(elementType).getFloatSemantics(),
            llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

int64_t mlir::ober::reference::wrapToInteger(Type elementType, int64_t v) {
  unsigned width = elementType.getIntOrFloatBitWidth();
  if (width == 1)
    return v != 0;
  if (width >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << width) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (u >> (width - 1))
    u |= ~mask;
  return static_cast<int64_t>(u);
}

Tensor::Tensor(Type elementType, ArrayRef<int64_t> shape)
    : elementType(elementType), shape(shape) {
  numElements = 1;
  for (int64_t d : shape)
    numElements *= d;
  if (isString())
    strings.assign(numElements, "");
  else if (isFloat())
    floats.assign(numElements, 0.0);
  else
    ints.assign(numElements, 0);
}

Tensor Tensor::fromAttr(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  Tensor t(type.getElementType(), type.getShape());
  if (t.isString()) {
    int64_t i = 0;
    for (StringRef s : cast<DenseStringElementsAttr>(attr).getRawStringData())
      t.strings[i++] = s.str();
    return t;
  }
  if (t.isFloat()) {
    int64_t i = 0;
    for (const llvm::APFloat &v : attr.getValues<llvm::APFloat>()) {
      bool losesInfo;
      llvm::APFloat d = v;
      d.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
      t.floats[i++] = d.convertToDouble();
    }
  } else {
    bool isBool = type.getElementType().isInteger(1);
    int64_t i = 0;
    for (const llvm::APInt &v : attr.getValues<llvm::APInt>())
      t.ints[i++] = isBool ? v.getZExtValue() : v.getSExtValue();
  }
  return t;
}

DenseElementsAttr Tensor::toAttr(RankedTensorType type) const {
  if (isString()) {
    SmallVector<StringRef> values(strings.begin(), strings.end());
    return DenseStringElementsAttr::get(type, values);
  }
  if (isFloat()) {
    const llvm::fltSemantics &semantics =
        cast<FloatType>(elementType).getFloatSemantics();
    SmallVector<llvm::APFloat> values;
    values.reserve(numElements);
    for (double v : floats) {
      llvm::APFloat f(v);
      bool losesInfo;
      f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<llvm::APInt> values;
  values.reserve(numElements);
  for (int64_t v : ints)
    values.push_back(llvm::APInt(width, static_cast<uint64_t>(v),
                                 /*isSigned=*/width > 1, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

int64_t Tensor::getSizeInBytes() const {
  if (isString()) {
    int64_t bytes = 0;
    for (const std::string &s : strings)
      bytes += s.size() + 1;
    return bytes;
  }
  unsigned bits = elementType.getIntOrFloatBitWidth();
  return numElements * std::max<int64_t>(1, bits / 8);
}

Tensor Tensor::reshaped(ArrayRef<int64_t> newShape) const {
  Tensor t = *this;
  t.shape.assign(newShape.begin(), newShape.end());
  return t;
}

SmallVector<int64_t> mlir::ober::reference::stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

SmallVector<int64_t>
mlir::ober::reference::broadcastStrides(ArrayRef<int64_t> shape,
                                        ArrayRef<int64_t> target) {
  SmallVector<int64_t> own = stridesOf(shape);
  SmallVector<int64_t> strides(target.size(), 0);
  size_t offset = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    strides[offset + i] = shape[i] == 1 ? 0 : own[i];
  return strides;
}

void mlir::ober::reference::forEachElement(
    ArrayRef<int64_t> shape, ArrayRef<SmallVector<int64_t>> strides,
    function_ref<void(int64_t, ArrayRef<int64_t>)> fn) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  if (total == 0)
    return;
  size_t rank = shape.size(), n = strides.size();
  SmallVector<int64_t> index(rank, 0), offsets(n, 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(linear, offsets);
    // Advance the multi-index and the offsets incrementally.
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        for (size_t k = 0; k < n; ++k)
          offsets[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < n; ++k)
        offsets[k] -= strides[k][d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}
