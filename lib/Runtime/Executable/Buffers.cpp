//===- Buffers.cpp - tensors handed to compiled code -----------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace ober::rt;

namespace {

/// Buffers start on a cache line, as generated code's allocations do.
constexpr size_t kAlignment = 64;

uint16_t bf16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN stays NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  // Round to nearest, ties to even.
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float bf16Value(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float halfValue(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (man << 13);
  } else if (exp) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man) { // subnormal
    int shift = 0;
    while (!(man & 0x400)) {
      man <<= 1;
      ++shift;
    }
    bits = sign | ((113 - shift) << 23) | ((man & 0x3ff) << 13);
  } else {
    bits = sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t halfBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint32_t sign = (bits >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t man = bits & 0x7fffff;
  if (((bits >> 23) & 0xff) == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 0x1f)
    return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10)
      return static_cast<uint16_t>(sign);
    man |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1),
             mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exp) << 10) | (man >> 13);
  uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return static_cast<uint16_t>(half);
}

} // namespace

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : type(dtype), dims(std::move(shape)) {
  size_t size = byteSize();
  size_t rounded = (std::max<size_t>(size, 1) + kAlignment - 1) / kAlignment *
                   kAlignment;
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p) {
    std::fprintf(stderr, "ober: out of memory allocating %zu bytes\n", rounded);
    std::exit(71);
  }
  std::memset(p, 0, rounded);
  owner = std::shared_ptr<void>(p, std::free);
  bytes = static_cast<char *>(p);
}

HostTensor HostTensor::adopt(DType dtype, std::vector<int64_t> shape,
                             void *block, char *data) {
  HostTensor t;
  t.type = dtype;
  t.dims = std::move(shape);
  t.owner = std::shared_ptr<void>(block, std::free);
  t.bytes = data;
  return t;
}

HostTensor HostTensor::share(const HostTensor &base, DType dtype,
                             std::vector<int64_t> shape, char *data) {
  HostTensor t;
  t.type = dtype;
  t.dims = std::move(shape);
  t.owner = base.owner;
  t.bytes = data;
  return t;
}

size_t HostTensor::byteSize() const {
  return static_cast<size_t>(elementCount(dims)) * dtypeSize(type);
}

std::vector<int64_t> HostTensor::descriptor() const {
  size_t rank = dims.size();
  std::vector<int64_t> words(3 + 2 * rank, 0);
  words[0] = reinterpret_cast<int64_t>(owner.get());
  words[1] = reinterpret_cast<int64_t>(bytes);
  int64_t stride = 1;
  for (size_t k = rank; k-- > 0;) {
    words[3 + k] = dims[k];
    words[3 + rank + k] = stride;
    stride *= dims[k];
  }
  return words;
}

bool ober::rt::tensorFromArray(const NpyArray &array, DType dtype,
                               HostTensor &out, std::string &error) {
  bool widened = dtype == DType::BF16 && array.type == DType::F32;
  if (array.type != dtype && !widened) {
    error = std::string("holds ") + dtypeName(array.type) + " data, expected " +
            dtypeName(dtype) + (dtype == DType::BF16 ? " (or float32)" : "");
    return false;
  }
  out = HostTensor(dtype, array.shape);
  if (!widened) {
    std::memcpy(out.data(), array.data.data(), out.byteSize());
    return true;
  }
  for (int64_t i = 0, n = elementCount(array.shape); i < n; ++i) {
    float f;
    std::memcpy(&f, array.data.data() + 4 * i, 4);
    uint16_t b = bf16Bits(f);
    std::memcpy(out.data() + 2 * i, &b, 2);
  }
  return true;
}

NpyArray ober::rt::arrayOf(const HostTensor &t) {
  NpyArray a;
  a.shape = t.shape();
  if (t.dtype() == DType::BF16) {
    a.type = DType::F32;
    a.data.resize(elementCount(t.shape()) * 4);
    for (int64_t i = 0, n = elementCount(t.shape()); i < n; ++i) {
      float f = static_cast<float>(loadFloat(t, i));
      std::memcpy(a.data.data() + 4 * i, &f, 4);
    }
    return a;
  }
  a.type = t.dtype();
  a.data.assign(t.data(), t.data() + t.byteSize());
  return a;
}

double ober::rt::loadFloat(const HostTensor &t, int64_t i) {
  const char *p = t.data() + i * dtypeSize(t.dtype());
  switch (t.dtype()) {
  case DType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case DType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case DType::BF16:
  case DType::F16: {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return t.dtype() == DType::BF16 ? bf16Value(b) : halfValue(b);
  }
  default:
    return 0;
  }
}

void ober::rt::storeFloat(HostTensor &t, int64_t i, double value) {
  char *p = t.data() + i * dtypeSize(t.dtype());
  switch (t.dtype()) {
  case DType::F32: {
    float f = static_cast<float>(value);
    std::memcpy(p, &f, 4);
    return;
  }
  case DType::F64:
    std::memcpy(p, &value, 8);
    return;
  case DType::BF16:
  case DType::F16: {
    float f = static_cast<float>(value);
    uint16_t b = t.dtype() == DType::BF16 ? bf16Bits(f) : halfBits(f);
    std::memcpy(p, &b, 2);
    return;
  }
  default:
    return;
  }
}

