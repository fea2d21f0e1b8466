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
#include <deque>
#include <map>
#include <tuple>
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

  /// The collectives run so far, in order, as one replica sees them: the
  /// devices at coordinate 0 on every axis but the pipeline axis (with
  /// pipeline stages, each stage's own collectives and the transfers it
  /// sends).
  std::vector<CollectiveRecord> records() const;

  /// The grid axis of pipeline stages, if any (transfers run along it).
  void setPipelineAxis(int64_t axis) { pipelineAxis = axis; }

private:
  /// Every member's input, once all members of the group have arrived (in
  /// `members` order). Members call their group's collectives in the same
  /// order; other groups run independently.
  std::vector<Tensor> exchange(int64_t rank, const Tensor &input,
                               const std::vector<int64_t> &members);
  /// The ranks of `rank`'s group over `axes`, ordered by their coordinates
  /// on those axes.
  std::vector<int64_t> group(int64_t rank, ArrayRef<int16_t> axes) const;
  /// `rank` with its coordinates on `axes` replaced by `coords`.
  int64_t moveAlong(int64_t rank, ArrayRef<int16_t> axes,
                    ArrayRef<int64_t> coords) const;
  bool recording(int64_t rank) const;

  struct GroupState {
    int64_t arrived = 0, generation = 0;
    std::map<int64_t, Tensor> slots, published;
  };

  SmallVector<int64_t> shape;
  int64_t numDevices = 1, pipelineAxis = -1;
  mutable std::mutex mutex;
  std::condition_variable arrivedAll;
  std::map<std::vector<int64_t>, GroupState> groups;
  /// Point-to-point messages by (source, destination, tag), received in
  /// the order they were sent (a loop sends one per iteration).
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<Tensor>> mailbox;
  std::vector<CollectiveRecord> log;
};

} // namespace mlir::ober::reference

#endif // OBER_REFERENCE_COLLECTIVES_H
