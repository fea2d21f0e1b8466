//===- DataFeed.h - a rank's share of each batch from a data set -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). With `--data`, each step's global
// batch is the run's next samples (`samples_per_step` of them, in the data
// set's shuffled order); each rank reads only the samples of its block of
// every batch input, while the previous step runs (a prefetch thread).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_DATAFEED_H
#define OBER_LIB_RUNTIME_EXECUTABLE_DATAFEED_H

#include "Run.h"

#include "ober/Runtime/Dataset.h"

#include <future>

namespace ober::rt {

class DataFeed {
public:
  /// Opens `options.data` for `program`'s batch inputs; false with `error`.
  bool open(const Program &program, const Options &options,
            const Placement &where, std::string &error);
  /// This rank's batch tensors of step `step` (by batch input; empty for
  /// inputs its stage never touches), and starts reading the next step's.
  std::vector<HostTensor> batch(int64_t step);
  std::string fingerprint() const { return data->fingerprint(); }
  int64_t samples() const { return data->size(); }

private:
  struct Input {
    size_t arg;
    /// Whether this rank's stage reads it (else it is not read).
    bool used;
    /// Per local sample slot, its place in the global batch.
    std::vector<int64_t> slots;
    size_t sampleBytes;
  };
  std::vector<HostTensor> read(int64_t step);

  const Program *program = nullptr;
  const Placement *where = nullptr;
  std::unique_ptr<Dataset> data;
  std::unique_ptr<SampleOrder> order;
  std::vector<Input> inputs;
  std::string log;
  int64_t pending = -1;
  std::future<std::vector<HostTensor>> next;
};

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_DATAFEED_H
