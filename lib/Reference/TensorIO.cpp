//===- TensorIO.cpp - reference tensors to and from files -----------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Reference/TensorIO.h"

#include "ober/Dialect/Ober/IR/OberOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ober::reference;
using ::ober::rt::DType;

std::optional<DType> mlir::ober::reference::dtypeOf(Type t) {
  if (isa<ober::StringType>(t))
    return DType::Unicode;
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
  case DType::Unicode: return ober::StringType::get(context);
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
  if (dtype == DType::Unicode) {
    // Fixed-width UTF-32 to UTF-8, without the padding NULs.
    int64_t n = std::max<int64_t>(t.getNumElements(), 1);
    size_t width = bytes.size() / 4 / n;
    for (int64_t i = 0; i < t.getNumElements(); ++i) {
      std::string s;
      for (size_t c = 0; c < width; ++c) {
        uint32_t cp = load<uint32_t>(bytes.data() + (i * width + c) * 4);
        if (!cp)
          break;
        if (cp < 0x80) {
          s += static_cast<char>(cp);
        } else if (cp < 0x800) {
          s += static_cast<char>(0xC0 | cp >> 6);
          s += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
          s += static_cast<char>(0xE0 | cp >> 12);
          s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          s += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          s += static_cast<char>(0xF0 | cp >> 18);
          s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
          s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          s += static_cast<char>(0x80 | (cp & 0x3F));
        }
      }
      t.setString(i, s);
    }
    return t;
  }
  size_t size = rt::dtypeSize(dtype);
  if (bytes.size() != static_cast<size_t>(t.getNumElements()) * size) {
    error = "data size does not match the shape";
    return std::nullopt;
  }
  for (int64_t i = 0, e = t.getNumElements(); i < e; ++i) {
    const char *p = bytes.data() + i * size;
    if (floatTarget)
      t.setFloat(i, ::ober::rt::loadFloat(dtype, p));
    else
      t.setInt(i, loadInt(dtype, p));
  }
  return t;
}

/// UTF-8 to code points (invalid bytes map to U+FFFD).
static std::vector<uint32_t> codePoints(const std::string &s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2
              : (c >> 3) == 30 ? 3 : -1;
    if (extra < 0 || i + extra >= s.size() + (extra == 0 ? 1 : 0)) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    uint32_t cp = extra == 0 ? c : c & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k)
      cp = cp << 6 | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += extra + 1;
  }
  return out;
}

/// Strings as fixed-width UTF-32; returns the width in characters.
static int64_t encodeStrings(const Tensor &tensor, std::vector<char> &bytes) {
  std::vector<std::vector<uint32_t>> all;
  size_t width = 1;
  for (int64_t i = 0; i < tensor.getNumElements(); ++i) {
    all.push_back(codePoints(tensor.getString(i)));
    width = std::max(width, all.back().size());
  }
  bytes.assign(all.size() * width * 4, 0);
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t c = 0; c < all[i].size(); ++c)
      store(bytes.data() + (i * width + c) * 4, all[i][c]);
  return width;
}

void mlir::ober::reference::encodeTensor(const Tensor &tensor, bool bf16AsF32,
                                         DType &dtype,
                                         std::vector<char> &bytes) {
  dtype = dtypeOf(tensor.getElementType()).value_or(DType::F32);
  if (dtype == DType::Unicode) {
    encodeStrings(tensor, bytes);
    return;
  }
  if (dtype == DType::BF16 && bf16AsF32)
    dtype = DType::F32;
  size_t size = rt::dtypeSize(dtype);
  bytes.assign(static_cast<size_t>(tensor.getNumElements()) * size, 0);
  for (int64_t i = 0, e = tensor.getNumElements(); i < e; ++i) {
    char *p = bytes.data() + i * size;
    switch (dtype) {
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64:
      ::ober::rt::storeFloat(dtype, p, tensor.getFloat(i));
      break;
    case DType::Bool: store(p, static_cast<uint8_t>(tensor.getInt(i) != 0)); break;
    case DType::I8: store(p, static_cast<int8_t>(tensor.getInt(i))); break;
    case DType::U8: store(p, static_cast<uint8_t>(tensor.getInt(i))); break;
    case DType::I16: store(p, static_cast<int16_t>(tensor.getInt(i))); break;
    case DType::I32: store(p, static_cast<int32_t>(tensor.getInt(i))); break;
    case DType::I64: store(p, tensor.getInt(i)); break;
    case DType::Unicode: break; // handled above
    }
  }
}

::ober::rt::NpyArray mlir::ober::reference::toNpy(const Tensor &tensor) {
  rt::NpyArray array;
  if (tensor.isString()) {
    array.type = DType::Unicode;
    array.itemChars = encodeStrings(tensor, array.data);
    array.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    return array;
  }
  encodeTensor(tensor, /*bf16AsF32=*/true, array.type, array.data);
  array.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return array;
}
