//===- Reduce.cpp - element-wise reductions of communicated buffers -------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Comm.h"

#include <algorithm>
#include <cstring>

using namespace ober::rt;

namespace {
template <typename T> T combine(int reduction, T a, T b) {
  switch (reduction) {
  case OBER_REDUCE_MAX:
    return std::max(a, b);
  case OBER_REDUCE_MIN:
    return std::min(a, b);
  case OBER_REDUCE_PRODUCT:
    return a * b;
  default:
    return a + b;
  }
}

template <typename T>
void reduceTyped(int reduction, void *acc, const void *x, int64_t count) {
  auto *a = static_cast<T *>(acc);
  auto *b = static_cast<const T *>(x);
  for (int64_t i = 0; i < count; ++i)
    a[i] = combine<T>(reduction, a[i], b[i]);
}
} // namespace

void ober::rt::reduceInto(DType type, int reduction, void *acc, const void *x,
                          int64_t count) {
  switch (type) {
  case DType::F32:
    return reduceTyped<float>(reduction, acc, x, count);
  case DType::F64:
    return reduceTyped<double>(reduction, acc, x, count);
  case DType::I64:
    return reduceTyped<int64_t>(reduction, acc, x, count);
  case DType::I32:
    return reduceTyped<int32_t>(reduction, acc, x, count);
  case DType::I16:
    return reduceTyped<int16_t>(reduction, acc, x, count);
  case DType::I8:
    return reduceTyped<int8_t>(reduction, acc, x, count);
  case DType::U8:
    return reduceTyped<uint8_t>(reduction, acc, x, count);
  case DType::Bool: {
    // Sum and max are "or", product and min "and".
    auto *a = static_cast<uint8_t *>(acc);
    auto *b = static_cast<const uint8_t *>(x);
    bool any = reduction == OBER_REDUCE_SUM || reduction == OBER_REDUCE_MAX;
    for (int64_t i = 0; i < count; ++i)
      a[i] = any ? (a[i] || b[i]) : (a[i] && b[i]);
    return;
  }
  case DType::F16:
  case DType::BF16: {
    auto *a = static_cast<char *>(acc);
    auto *b = static_cast<const char *>(x);
    for (int64_t i = 0; i < count; ++i)
      storeFloat(type, a + 2 * i,
                 combine<double>(reduction, loadFloat(type, a + 2 * i),
                                 loadFloat(type, b + 2 * i)));
    return;
  }
  default:
    throw CommError(std::string("cannot reduce ") + dtypeName(type) +
                    " elements");
  }
}
