//===- DType.cpp - element types of runtime tensors -----------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/DType.h"

#include <cstdint>
#include <cstring>

using namespace ober::rt;

namespace {
struct Info {
  DType type;
  size_t size;
  const char *name;
  const char *safetensors;
  const char *mlir; // MLIR's element type spelling
};
constexpr Info kInfo[] = {
    {DType::F16, 2, "float16", "F16", "f16"},
    {DType::BF16, 2, "bfloat16", "BF16", "bf16"},
    {DType::F32, 4, "float32", "F32", "f32"},
    {DType::F64, 8, "float64", "F64", "f64"},
    {DType::Bool, 1, "bool", "BOOL", "i1"},
    {DType::I8, 1, "int8", "I8", "i8"},
    {DType::U8, 1, "uint8", "U8", "ui8"},
    {DType::I16, 2, "int16", "I16", "i16"},
    {DType::I32, 4, "int32", "I32", "i32"},
    {DType::I64, 8, "int64", "I64", "i64"},
    {DType::Unicode, 4, "str", "STRING", "!str"},
};
const Info &info(DType type) { return kInfo[static_cast<int>(type)]; }
} // namespace

size_t ober::rt::dtypeSize(DType type) { return info(type).size; }
const char *ober::rt::dtypeName(DType type) { return info(type).name; }
const char *ober::rt::dtypeMLIRName(DType type) { return info(type).mlir; }
const char *ober::rt::dtypeSafeTensorsName(DType type) {
  return info(type).safetensors;
}
std::optional<DType> ober::rt::dtypeFromSafeTensorsName(const std::string &name) {
  for (const Info &i : kInfo)
    if (name == i.safetensors)
      return i.type;
  return std::nullopt;
}
std::optional<DType> ober::rt::dtypeFromName(const std::string &name) {
  for (const Info &i : kInfo)
    if (i.type != DType::Unicode && (name == i.name || name == i.mlir))
      return i.type;
  return std::nullopt;
}
const char *ober::rt::dtypeNames() {
  return "f32, f16, bf16, f64, i64, i32, i16, i8, ui8, i1 (or NumPy's "
         "float32, ..., bool)";
}

namespace {
template <typename T> T load(const void *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void store(void *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

/// The bf16 nearest to `f` (ties to even); a NaN stays a (quiet) NaN.
uint16_t bf16Bits(float f) {
  uint32_t bits = load<uint32_t>(&f);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
} // namespace

double ober::rt::loadFloat(DType type, const void *p) {
  switch (type) {
  case DType::F16:
    return static_cast<double>(load<_Float16>(p));
  case DType::BF16: {
    uint32_t bits = static_cast<uint32_t>(load<uint16_t>(p)) << 16;
    return load<float>(&bits);
  }
  case DType::F32:
    return load<float>(p);
  case DType::F64:
    return load<double>(p);
  default:
    return 0;
  }
}

void ober::rt::storeFloat(DType type, void *p, double value) {
  switch (type) {
  case DType::F16:
    return store(p, static_cast<_Float16>(value));
  case DType::BF16:
    return store(p, bf16Bits(static_cast<float>(value)));
  case DType::F32:
    return store(p, static_cast<float>(value));
  case DType::F64:
    return store(p, value);
  default:
    return;
  }
}

std::optional<uint64_t> ober::rt::checkedBytes(const std::vector<int64_t> &shape,
                                               uint64_t elementBytes) {
  constexpr uint64_t kLimit = uint64_t(1) << 62;
  uint64_t total = elementBytes;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(total, static_cast<uint64_t>(d),
                                        &total) ||
        total > kLimit)
      return std::nullopt;
  return total;
}

#ifdef OBER_RT_BF16_IN_FLOAT_REGISTER
extern "C" float __truncsfbf2(float f) {
  uint32_t bits = bf16Bits(f);
  return load<float>(&bits);
}
#endif
