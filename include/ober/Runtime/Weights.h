//===- Weights.h - the external weights file --------------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Model parameters live beside the IR
// in one file in the safetensors layout: an 8-byte little-endian header
// length, a JSON header mapping each parameter name to its dtype, shape and
// byte range, then the raw little-endian data. Python reads it with a few
// lines of json + numpy, and `safetensors` reads it as is.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_WEIGHTS_H
#define OBER_RUNTIME_WEIGHTS_H

#include "ober/Runtime/DType.h"

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ober::rt {

struct WeightInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t offset = 0; // from the start of the data section
  uint64_t size = 0;   // bytes
};

/// A weights file opened for reading; tensors are read on demand.
class WeightsFile {
public:
  /// Opens and validates `path`: the header, every dtype, shape and byte
  /// range. On failure returns false with `error` naming the file and field.
  bool open(const std::string &path, std::string &error);

  const std::vector<WeightInfo> &entries() const { return infos; }
  const std::map<std::string, std::string> &metadata() const { return meta; }
  const WeightInfo *find(const std::string &name) const;

  /// Reads the bytes of `info` into `out` (resized to info.size).
  bool read(const WeightInfo &info, std::vector<char> &out,
            std::string &error) const;

private:
  std::string path;
  mutable std::ifstream stream;
  uint64_t dataStart = 0;
  std::vector<WeightInfo> infos;
  std::map<std::string, size_t> index;
  std::map<std::string, std::string> meta;
};

struct WeightData {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t size = 0; // bytes
};

/// Writes `weights` (names unique) and string `metadata` to `path`.
bool writeWeights(const std::string &path, const std::vector<WeightData> &weights,
                  const std::map<std::string, std::string> &metadata,
                  std::string &error);

} // namespace ober::rt

#endif // OBER_RUNTIME_WEIGHTS_H
