//===- Buffers.h - the memrefs generated code passes the CUDA library -----===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_BUFFERS_H
#define OBER_RUNTIME_DEVICES_BUFFERS_H

#include "ober/Runtime/CPUKernels.h"

#include <cstddef>
#include <cstdint>

namespace ober::rt::cuda::detail {

/// The element at `buffer`'s aligned pointer plus its offset.
inline char *dataOf(const ober_rt_buffer *buffer, size_t elementBytes) {
  const ober_rt_memref *m = buffer->descriptor;
  return static_cast<char *>(m->aligned) + m->offset * elementBytes;
}

/// Elements of `buffer` (the product of its sizes).
inline int64_t elementsOf(const ober_rt_buffer *buffer) {
  const int64_t *sizes =
      reinterpret_cast<const int64_t *>(buffer->descriptor + 1);
  int64_t n = 1;
  for (int64_t i = 0; i < buffer->rank; ++i)
    n *= sizes[i];
  return n;
}

} // namespace ober::rt::cuda::detail

#endif // OBER_RUNTIME_DEVICES_BUFFERS_H
