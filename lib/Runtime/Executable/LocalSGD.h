//===- LocalSGD.h - the outer step of local SGD -----------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Under a local-SGD plan the
// data-parallel replicas train apart; every H steps each parameter block
// moves to its anchor (its value at the last average) minus the outer
// step, DiLoCo's Nesterov momentum SGD on the replicas' mean delta:
//
//   g = anchor - mean over replicas of param     (the outer gradient)
//   v = momentum * v + g
//   anchor = anchor - lr * (g + momentum * v)
//   param = anchor                                (every replica)
//
// The inner optimizer's state stays each replica's own. Checkpoints keep
// the anchors and velocities as side state (`outer.anchor.<param>`,
// `outer.velocity.<param>`).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_LOCALSGD_H
#define OBER_LIB_RUNTIME_EXECUTABLE_LOCALSGD_H

#include "Checkpoint.h"
#include "Run.h"

namespace ober::rt {

class LocalSGD {
public:
  /// Anchors the parameters this rank's stage updates, at their values in
  /// `args` (the same on every replica).
  LocalSGD(const Program &program, const Placement &where,
           const Options &options, const std::vector<HostTensor> &args);

  /// Anchors at `args` again, with zero velocities.
  void anchorAt(const std::vector<HostTensor> &args);

  /// After step `step` (from 0): on every H-th, the outer step.
  void afterStep(int64_t step, std::vector<HostTensor> &args);

  /// The anchors and velocities as checkpoint side state (empty without
  /// local SGD); `restore` takes back those a checkpoint held.
  std::vector<SideState> sideState() const;
  void restore(const std::vector<SideState> &side);

private:
  struct Slot {
    size_t arg;
    std::vector<float> anchor, velocity;
  };
  const Program &program;
  const Placement &where;
  double lr, momentum;
  std::vector<Slot> slots;
};

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_LOCALSGD_H
