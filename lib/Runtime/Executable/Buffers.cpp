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

/// Buffers start on a cache line, as generated code's allocations do.
static constexpr size_t kAlignment = 64;

void *ober::rt::allocateHostBlock(size_t size) {
  size_t rounded = (std::max<size_t>(size, 1) + kAlignment - 1) / kAlignment *
                   kAlignment;
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p) {
    std::fprintf(stderr, "ober: out of memory allocating %zu bytes\n", rounded);
    std::exit(71);
  }
  std::memset(p, 0, rounded);
  return p;
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : type(dtype), dims(std::move(shape)) {
  void *p = allocateHostBlock(byteSize());
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
  for (int64_t i = 0, n = elementCount(array.shape); i < n; ++i)
    storeFloat(out, i, loadFloat(DType::F32, array.data.data() + 4 * i));
  return true;
}

NpyArray ober::rt::arrayOf(const HostTensor &t) {
  NpyArray a;
  a.shape = t.shape();
  if (t.dtype() == DType::BF16) {
    a.type = DType::F32;
    a.data.resize(elementCount(t.shape()) * 4);
    for (int64_t i = 0, n = elementCount(t.shape()); i < n; ++i)
      storeFloat(DType::F32, a.data.data() + 4 * i, loadFloat(t, i));
    return a;
  }
  a.type = t.dtype();
  a.data.assign(t.data(), t.data() + t.byteSize());
  return a;
}

double ober::rt::loadFloat(const HostTensor &t, int64_t i) {
  return loadFloat(t.dtype(), t.data() + i * dtypeSize(t.dtype()));
}

void ober::rt::storeFloat(HostTensor &t, int64_t i, double value) {
  storeFloat(t.dtype(), t.data() + i * dtypeSize(t.dtype()), value);
}
