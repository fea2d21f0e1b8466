//===- Collectives.h - simulated devices for the interpreter ----*- C++ -*-===//
//
// Part of Ober-Train. N interpreters on N threads run one SPMD program;
// `shard` dialect collectives meet in a Communicator, which gives each
// device exactly what the collective means for it (all-reduce, all-gather,
// reduce-scatter over the grid axes named, all-slice) and counts the bytes.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_REFERENCE_COLLECTIVES_H
#define OBER_REFERENCE_COLLECTIVES_H

#include "ober/Reference/Tensor.h"

#include "mlir/IR/Operation.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace mlir::ober::reference {

/// One collective as device 0 saw it.
struct CollectiveRecord {
  std::string kind;
  /// Bytes of the full buffer each device contributes (at element-type
  /// width), and the devices in its group.
  int64_t bytes = 0, groupSize = 1;
};

class Communicator {
public:
  /// Devices on a grid of `shape` (row-major ranks).
  explicit Communicator(ArrayRef<int64_t> shape);

  int64_t size() const { return numDevices; }

  /// The grid coordinates of `rank` (row-major).
  static SmallVector<int64_t> coordinates(ArrayRef<int64_t> shape,
                                          int64_t rank);

  /// Whether `op` is a collective this communicator runs.
  static bool handles(Operation *op);

  /// Runs collective `op` for device `rank` on its `input`; every device
  /// must call it in the same order.
  FailureOr<Tensor> run(Operation *op, int64_t rank, const Tensor &input);

  /// The collectives run so far, in order (device 0's view).
  std::vector<CollectiveRecord> records() const;

private:
  /// Every device's input, once all have arrived.
  std::vector<Tensor> exchange(int64_t rank, const Tensor &input);
  /// The ranks of `rank`'s group over `axes`, ordered by their coordinates
  /// on those axes.
  std::vector<int64_t> group(int64_t rank, ArrayRef<int16_t> axes) const;

  SmallVector<int64_t> shape;
  int64_t numDevices = 1;
  mutable std::mutex mutex;
  std::condition_variable arrivedAll;
  int64_t arrived = 0, generation = 0;
  std::vector<Tensor> slots, published;
  std::vector<CollectiveRecord> log;
};

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_COLLECTIVES_H
