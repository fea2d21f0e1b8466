//===- Buffers.h - tensors handed to compiled code --------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A compiled program takes and
// returns memref descriptors over buffers: the executable owns its
// arguments' buffers, and results come back in buffers the program
// allocated (malloc'ed, freed here once no tensor holds them).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_BUFFERS_H
#define OBER_LIB_RUNTIME_EXECUTABLE_BUFFERS_H

#include "ober/Runtime/Npy.h"
#include "ober/Runtime/Program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ober::rt {

/// A dense row-major tensor in a buffer shared by the tensors holding it
/// (a program may return one buffer twice).
class HostTensor {
public:
  HostTensor() = default;
  /// A zeroed tensor in a new buffer.
  HostTensor(DType dtype, std::vector<int64_t> shape);
  /// A tensor over `block` (malloc'ed by compiled code), taken over.
  static HostTensor adopt(DType dtype, std::vector<int64_t> shape, void *block,
                          char *data);

  /// A tensor over `data` inside `base`'s buffer, keeping it alive.
  static HostTensor share(const HostTensor &base, DType dtype,
                          std::vector<int64_t> shape, char *data);

  DType dtype() const { return type; }
  const std::vector<int64_t> &shape() const { return dims; }
  char *data() const { return bytes; }
  size_t byteSize() const;
  /// The block compiled code sees as the allocation (for aliasing checks).
  void *block() const { return owner.get(); }
  /// How many tensors hold this one's buffer (this one included).
  long holders() const { return owner.use_count(); }

  /// The memref descriptor of this tensor: allocated and aligned
  /// pointers, offset, sizes, strides.
  std::vector<int64_t> descriptor() const;

private:
  DType type = DType::F32;
  std::vector<int64_t> dims;
  std::shared_ptr<void> owner;
  char *bytes = nullptr;
};

/// A zeroed block of at least `bytes` on a cache line, as generated code
/// allocates them (freed with std::free); exits when memory is out.
void *allocateHostBlock(size_t bytes);

/// Converts an .npy array to a tensor of `dtype` and `shape` (exact dtype,
/// or f32 data for bf16); on failure sets `error` (without the file name).
bool tensorFromArray(const NpyArray &array, DType dtype, HostTensor &out,
                     std::string &error);
/// The .npy array of a tensor (bf16 is written as f32).
NpyArray arrayOf(const HostTensor &t);

/// Element `i` of a float tensor as a double.
double loadFloat(const HostTensor &t, int64_t i);
/// Stores `value` in element `i` of a float tensor (rounded to its type).
void storeFloat(HostTensor &t, int64_t i, double value);

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_BUFFERS_H
