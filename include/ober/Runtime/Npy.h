//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Reads and writes NumPy's .npy
// format (versions 1.0, 2.0 and 3.0, little-endian, C order), the exchange
// format of ober-run and of training-data files.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_NPY_H
#define OBER_RUNTIME_NPY_H

#include "ober/Runtime/DType.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ober::rt {

/// An array as .npy files hold it. NumPy has no bfloat16: DType::BF16 is
/// never read and cannot be written.
struct NpyArray {
  DType type = DType::F32;
  std::vector<int64_t> shape;
  /// Characters per element of a DType::Unicode array.
  int64_t itemChars = 0;
  std::vector<char> data; // C order, little-endian

  int64_t numElements() const;
};

/// Parses an .npy image held in memory. On failure returns false and sets
/// `error` (which does not name the file). With `dataOffset`, only the
/// header is read (`out.data` stays empty) and the data's offset is set.
bool parseNpy(const char *bytes, size_t size, NpyArray &out, std::string &error,
              size_t *dataOffset = nullptr);

/// Reads `path`. On failure returns false and sets `error` naming the file.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Writes `array` to `path` (version 1.0 header, or 2.0 when needed).
bool writeNpy(const std::string &path, const NpyArray &array,
              std::string &error);

} // namespace ober::rt

#endif // OBER_RUNTIME_NPY_H
