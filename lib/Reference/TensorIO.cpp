//===- TensorIO.cpp - reference tensors to and from files -----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Reference/TensorIO.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ober::reference;
using ::ober::rt::DType;

std::optional<DType> mlir::ober::reference::dtypeOf(Type t) {
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isInteger(1))
    return DType::Bool;
  if (t.isInteger(8))
    return DType::I8;
  if (t.isInteger(16))
    return DType::I16;
  if (t.isInteger(32))
    return DType::I32;
  if (t.isInteger(64))
    return DType::I64;
  return std::nullopt;
}

Type mlir::ober::reference::elementTypeOf(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::F16: return b.getF16Type();
  case DType::BF16: return b.getBF16Type();
  case DType::F32: return b.getF32Type();
  case DType::F64: return b.getF64Type();
  case DType::Bool: return b.getI1Type();
  case DType::I8: return b.getI8Type();
  case DType::I16: return b.getI16Type();
  case DType::I32: return b.getI32Type();
  case DType::I64: return b.getI64Type();
  case DType::U8: return Type();
  }
  return Type();
}

namespace {
template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void store(char *p, T v) { std::memcpy(p, &v, sizeof(T)); }

double loadFloat(DType dtype, const char *p) {
  switch (dtype) {
  case DType::F16: return static_cast<double>(load<_Float16>(p));
  case DType::BF16: {
    uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p)) << 16;
    return static_cast<double>(load<float>(reinterpret_cast<char *>(&bits)));
  }
  case DType::F32: return load<float>(p);
  case DType::F64: return load<double>(p);
  default: return 0;
  }
}

int64_t loadInt(DType dtype, const char *p) {
  switch (dtype) {
  case DType::Bool: return load<uint8_t>(p) != 0;
  case DType::I8: return load<int8_t>(p);
  case DType::U8: return load<uint8_t>(p);
  case DType::I16: return load<int16_t>(p);
  case DType::I32: return load<int32_t>(p);
  case DType::I64: return load<int64_t>(p);
  default: return 0;
  }
}

bool isFloatDType(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 ||
         d == DType::F64;
}
} // namespace

std::optional<Tensor> mlir::ober::reference::decodeTensor(
    DType dtype, ArrayRef<int64_t> shape, const std::vector<char> &bytes,
    Type elementType, std::string &error) {
  std::optional<DType> expected = dtypeOf(elementType);
  bool floatTarget = isa<FloatType>(elementType);
  bool ok = expected && (*expected == dtype ||
                         (floatTarget && isFloatDType(dtype) &&
                          *expected == DType::BF16 && dtype == DType::F32));
  if (!ok) {
    std::string type;
    llvm::raw_string_ostream os(type);
    os << elementType;
    error = std::string("expected ") +
            (expected ? rt::dtypeName(*expected) : type.c_str()) +
            " data for element type " + type + ", got " + rt::dtypeName(dtype);
    return std::nullopt;
  }
  Tensor t(elementType, shape);
  size_t size = rt::dtypeSize(dtype);
  if (bytes.size() != static_cast<size_t>(t.getNumElements()) * size) {
    error = "data size does not match the shape";
    return std::nullopt;
  }
  for (int64_t i = 0, e = t.getNumElements(); i < e; ++i) {
    const char *p = bytes.data() + i * size;
    if (floatTarget)
      t.setFloat(i, loadFloat(dtype, p));
    else
      t.setInt(i, loadInt(dtype, p));
  }
  return t;
}

void mlir::ober::reference::encodeTensor(const Tensor &tensor, bool bf16AsF32,
                                         DType &dtype,
                                         std::vector<char> &bytes) {
  dtype = dtypeOf(tensor.getElementType()).value_or(DType::F32);
  if (dtype == DType::BF16 && bf16AsF32)
    dtype = DType::F32;
  size_t size = rt::dtypeSize(dtype);
  bytes.assign(static_cast<size_t>(tensor.getNumElements()) * size, 0);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    char *p = bytes.data() + i * size;
    switch (dtype) {
    case DType::F16: store(p, static_cast<_Float16>(tensor.getFloat(i))); break;
    case DType::BF16: {
      float f = static_cast<float>(tensor.getFloat(i)); // already bf16-exact
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      store(p, static_cast<uint16_t>(bits >> 16));
      break;
    }
    case DType::F32: store(p, static_cast<float>(tensor.getFloat(i))); break;
    case DType::F64: store(p, tensor.getFloat(i)); break;
    case DType::Bool: store(p, static_cast<uint8_t>(tensor.getInt(i) != 0)); break;
    case DType::I8: store(p, static_cast<int8_t>(tensor.getInt(i))); break;
    case DType::U8: store(p, static_cast<uint8_t>(tensor.getInt(i))); break;
    case DType::I16: store(p, static_cast<int16_t>(tensor.getInt(i))); break;
    case DType::I32: store(p, static_cast<int32_t>(tensor.getInt(i))); break;
    case DType::I64: store(p, tensor.getInt(i)); break;
    }
  }
}

::ober::rt::NpyArray mlir::ober::reference::toNpy(const Tensor &tensor) {
  rt::NpyArray array;
  encodeTensor(tensor, /*bf16AsF32=*/true, array.type, array.data);
  array.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return array;
}
