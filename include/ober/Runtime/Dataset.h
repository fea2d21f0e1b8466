//===- Dataset.h - training data sets read by sample ------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A data set gives each batch input
// of a training step one tensor per sample, read from memory-mapped files:
//
//   * a Megatron-style indexed token data set (`PREFIX.bin` + `PREFIX.idx`):
//     the documents' tokens in one stream, samples of seq + 1 tokens whose
//     neighbours overlap by one token (so documents run into each other);
//     a step with two token-id inputs of `seq` tokens takes a sample's
//     first and last `seq` tokens (inputs and next-token targets);
//   * a folder of `.npy` arrays, `<input name>.npy` per batch input, the
//     first dimension samples.
//
// Samples are visited in a new order each epoch, shuffled from a seed
// (position p of the run is sample order(p / size)[p % size]).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DATASET_H
#define OBER_RUNTIME_DATASET_H

#include "ober/Runtime/DType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ober::rt {

/// What a data set must feed: a batch input's name, element type and the
/// shape of one sample.
struct SampleSpec {
  std::string name;
  DType dtype = DType::I64;
  std::vector<int64_t> shape;
};

class Dataset {
public:
  virtual ~Dataset();
  /// Samples in one epoch.
  virtual int64_t size() const = 0;
  /// Writes input `k`'s tensor of sample `sample` to `out`.
  virtual void read(size_t k, int64_t sample, char *out) const = 0;
  /// Identifies the data (kind, sizes and a hash of the index): a
  /// checkpoint refuses to continue on other data.
  virtual std::string fingerprint() const = 0;
};

/// Opens `path` (a token data set's prefix, `.bin` or `.idx`; or a folder of
/// `.npy` arrays) for inputs `specs`; null with `error` naming the file,
/// the input and what is expected.
std::unique_ptr<Dataset> openDataset(const std::string &path,
                                     const std::vector<SampleSpec> &specs,
                                     std::string &error);

/// The sample at run position `position` of a data set of `size` samples
/// shuffled per epoch from `seed`.
class SampleOrder {
public:
  SampleOrder(int64_t size, uint64_t seed) : n(size), seed(seed) {}
  int64_t at(int64_t position);

private:
  int64_t n;
  uint64_t seed;
  int64_t epoch = -1;
  std::vector<int64_t> order;
};

} // namespace ober::rt

#endif // OBER_RUNTIME_DATASET_H
