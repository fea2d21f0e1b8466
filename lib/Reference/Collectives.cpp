//===- Collectives.cpp - simulated devices for the interpreter ------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Reference/Collectives.h"
#include "ober/Runtime/Comm.h"

#include <chrono>

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ober::reference;

/// How long a receive waits for its send before reporting a deadlock.
static constexpr int kWaitSeconds = 300;

Communicator::Communicator(ArrayRef<int64_t> shape)
    : shape(shape.begin(), shape.end()) {
  for (int64_t d : shape)
    numDevices *= d;
}

bool Communicator::handles(Operation *op) {
  return isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
             shard::AllToAllOp, shard::AllSliceOp, shard::SendOp,
             shard::RecvOp>(op);
}

std::vector<Tensor>
Communicator::exchange(int64_t rank, const Tensor &input,
                       const std::vector<int64_t> &members) {
  std::unique_lock<std::mutex> lock(mutex);
  GroupState &g = groups[members];
  g.slots[rank] = input;
  int64_t mine = g.generation;
  if (++g.arrived == static_cast<int64_t>(members.size())) {
    g.published = std::move(g.slots);
    g.slots.clear();
    g.arrived = 0;
    ++g.generation;
    arrivedAll.notify_all();
  } else if (!arrivedAll.wait_for(lock, std::chrono::seconds(kWaitSeconds),
                                  [&] { return g.generation != mine; })) {
    // A member never came (it failed, or the programs deadlock).
    return {};
  }
  // The group's next collective cannot complete before this device
  // arrives there, so `published` still holds this one.
  std::vector<Tensor> parts;
  for (int64_t m : members)
    parts.push_back(g.published.at(m));
  return parts;
}

int64_t Communicator::moveAlong(int64_t rank, ArrayRef<int16_t> axes,
                                ArrayRef<int64_t> coords) const {
  SmallVector<int64_t> c = coordinates(shape, rank);
  for (auto [a, v] : llvm::zip(axes, coords))
    c[a] = v;
  int64_t linear = 0;
  for (auto [i, v] : llvm::enumerate(c))
    linear = linear * shape[i] + v;
  return linear;
}

bool Communicator::recording(int64_t rank) const {
  SmallVector<int64_t> c = coordinates(shape, rank);
  for (auto [i, v] : llvm::enumerate(c))
    if (static_cast<int64_t>(i) != pipelineAxis && v != 0)
      return false;
  return true;
}

SmallVector<int64_t> Communicator::coordinates(ArrayRef<int64_t> shape,
                                               int64_t rank) {
  SmallVector<int64_t> coords(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    coords[i] = rank % shape[i];
    rank /= shape[i];
  }
  return coords;
}

std::vector<int64_t> Communicator::group(int64_t rank,
                                         ArrayRef<int16_t> axes) const {
  int64_t rankCount = static_cast<int64_t>(shape.size());
  SmallVector<int64_t> coords = coordinates(shape, rank);
  // Enumerate the coordinates on `axes` row-major in the order given.
  std::vector<int64_t> members;
  int64_t count = 1;
  for (int16_t a : axes)
    count *= shape[a];
  for (int64_t k = 0; k < count; ++k) {
    SmallVector<int64_t> c = coords;
    for (int64_t i = static_cast<int64_t>(axes.size()) - 1, rem = k; i >= 0;
         --i) {
      c[axes[i]] = rem % shape[axes[i]];
      rem /= shape[axes[i]];
    }
    int64_t linear = 0;
    for (int64_t i = 0; i < rankCount; ++i)
      linear = linear * shape[i] + c[i];
    members.push_back(linear);
  }
  return members;
}

namespace {
double reduce(shard::ReductionKind kind, double a, double b) {
  switch (kind) {
  case shard::ReductionKind::Max:
    return std::max(a, b);
  case shard::ReductionKind::Min:
    return std::min(a, b);
  case shard::ReductionKind::Product:
    return a * b;
  default:
    return a + b;
  }
}

/// Part `index` of `parts` equal blocks of `t` along `axis`.
Tensor block(const Tensor &t, int64_t axis, int64_t index, int64_t parts) {
  SmallVector<int64_t> shape(t.getShape());
  int64_t size = shape[axis] / parts;
  shape[axis] = size;
  Tensor out(t.getElementType(), shape);
  SmallVector<int64_t> src = stridesOf(t.getShape()), dst = stridesOf(shape);
  for (int64_t i = 0; i < out.getNumElements(); ++i) {
    int64_t from = 0, rem = i;
    for (int64_t d = 0; d < out.getRank(); ++d) {
      int64_t c = rem / dst[d];
      rem %= dst[d];
      from += (d == axis ? c + index * size : c) * src[d];
    }
    out.copyElement(i, t, from);
  }
  return out;
}

/// `parts` concatenated along `axis`.
Tensor concat(ArrayRef<Tensor> parts, int64_t axis) {
  SmallVector<int64_t> shape(parts.front().getShape());
  int64_t size = shape[axis];
  shape[axis] = size * static_cast<int64_t>(parts.size());
  Tensor out(parts.front().getElementType(), shape);
  SmallVector<int64_t> dst = stridesOf(shape),
                       src = stridesOf(parts.front().getShape());
  for (int64_t i = 0; i < out.getNumElements(); ++i) {
    int64_t from = 0, rem = i, which = 0;
    for (int64_t d = 0; d < out.getRank(); ++d) {
      int64_t c = rem / dst[d];
      rem %= dst[d];
      if (d == axis) {
        which = c / size;
        c %= size;
      }
      from += c * src[d];
    }
    out.copyElement(i, parts[which], from);
  }
  return out;
}

int64_t bytesOf(const Tensor &t) { return t.getSizeInBytes(); }
} // namespace

FailureOr<Tensor> Communicator::run(Operation *op, int64_t rank,
                                    const Tensor &input) {
  // Counted by the runtime's convention (ober::rt::trafficOf).
  auto record = [&](int64_t kind, int64_t groupSize) {
    if (recording(rank)) {
      ::ober::rt::Traffic t =
          ::ober::rt::trafficOf(kind, bytesOf(input), groupSize);
      std::lock_guard<std::mutex> lock(mutex);
      log.push_back({t.kind, t.bytes, groupSize});
    }
  };
  auto tagOf = [&]() {
    auto tag = op->getAttrOfType<IntegerAttr>("ober.tag");
    return tag ? tag.getInt() : 0;
  };
  if (auto send = dyn_cast<shard::SendOp>(op)) {
    int64_t to = moveAlong(rank, send.getGridAxes(), send.getDestination());
    record(OBER_COLL_SEND, 2);
    std::lock_guard<std::mutex> lock(mutex);
    mailbox[{rank, to, tagOf()}].push_back(input);
    arrivedAll.notify_all();
    return input;
  }
  if (auto recv = dyn_cast<shard::RecvOp>(op)) {
    if (!recv.getSource())
      return op->emitError("the simulated devices need a static source");
    int64_t from = moveAlong(rank, recv.getGridAxes(), *recv.getSource());
    std::unique_lock<std::mutex> lock(mutex);
    auto key = std::make_tuple(from, rank, tagOf());
    // A program whose schedule waits for a transfer never sent would hang:
    // give up with an error instead.
    if (!arrivedAll.wait_for(lock, std::chrono::seconds(kWaitSeconds),
                             [&] {
                               auto it = mailbox.find(key);
                               return it != mailbox.end() && !it->second.empty();
                             }))
      return op->emitError("device ")
             << rank << " waited " << kWaitSeconds << " s for transfer "
             << std::get<2>(key) << " from device " << from
             << ": the stage programs deadlock";
    std::deque<Tensor> &queue = mailbox[key];
    Tensor out = std::move(queue.front());
    queue.pop_front();
    if (queue.empty())
      mailbox.erase(key);
    return out;
  }
  std::vector<int64_t> members;
  auto gather = [&](ArrayRef<int16_t> axes) {
    members = group(rank, axes);
    return exchange(rank, input, members);
  };
  auto missing = [&]() {
    return op->emitError("device ")
           << rank << " waited " << kWaitSeconds << " s for the other "
           << (members.size() - 1)
           << " devices of its group: one failed or the programs deadlock";
  };
  auto sum = [&](ArrayRef<Tensor> parts, shard::ReductionKind kind) {
    Tensor out = parts.front();
    for (const Tensor &p : parts.drop_front())
      for (int64_t i = 0; i < out.getNumElements(); ++i)
        out.setFloat(i, reduce(kind, out.getFloat(i), p.getFloat(i)));
    return out;
  };
  if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
    members = group(rank, slice.getGridAxes());
    int64_t index = std::find(members.begin(), members.end(), rank) -
                    members.begin();
    return block(input, slice.getSliceAxis().getSExtValue(), index,
                 static_cast<int64_t>(members.size()));
  }
  if (auto ar = dyn_cast<shard::AllReduceOp>(op)) {
    std::vector<Tensor> parts = gather(ar.getGridAxes());
    if (parts.empty())
      return missing();
    record(OBER_COLL_ALL_REDUCE, members.size());
    return sum(parts, ar.getReduction());
  }
  if (auto ag = dyn_cast<shard::AllGatherOp>(op)) {
    std::vector<Tensor> parts = gather(ag.getGridAxes());
    if (parts.empty())
      return missing();
    record(OBER_COLL_ALL_GATHER, members.size());
    return concat(parts, ag.getGatherAxis().getSExtValue());
  }
  if (auto a2a = dyn_cast<shard::AllToAllOp>(op)) {
    std::vector<Tensor> parts = gather(a2a.getGridAxes());
    if (parts.empty())
      return missing();
    record(OBER_COLL_ALL_TO_ALL, members.size());
    int64_t index = std::find(members.begin(), members.end(), rank) -
                    members.begin();
    int64_t n = static_cast<int64_t>(members.size());
    std::vector<Tensor> mine;
    for (const Tensor &p : parts)
      mine.push_back(block(p, a2a.getSplitAxis().getSExtValue(), index, n));
    return concat(mine, a2a.getConcatAxis().getSExtValue());
  }
  if (auto rs = dyn_cast<shard::ReduceScatterOp>(op)) {
    std::vector<Tensor> parts = gather(rs.getGridAxes());
    if (parts.empty())
      return missing();
    record(OBER_COLL_REDUCE_SCATTER, members.size());
    int64_t index = std::find(members.begin(), members.end(), rank) -
                    members.begin();
    return block(sum(parts, rs.getReduction()),
                 rs.getScatterAxis().getSExtValue(), index,
                 static_cast<int64_t>(members.size()));
  }
  return op->emitError("the simulated devices do not run '")
         << op->getName() << "'";
}

std::vector<CollectiveRecord> Communicator::records() const {
  std::lock_guard<std::mutex> lock(mutex);
  return log;
}
