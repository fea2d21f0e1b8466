//===- LocalSGD.cpp - the outer step of local SGD -------------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "LocalSGD.h"
#include "Target.h"

using namespace ober::rt;

/// The checkpoint name of a parameter's outer state (`what`: anchor or
/// velocity).
static std::string sideName(const char *what, const std::string &param) {
  return std::string("outer.") + what + "." + param;
}

LocalSGD::LocalSGD(const Program &program, const Placement &where,
                   const Options &options, const std::vector<HostTensor> &args)
    : program(program), where(where), lr(options.outerLearningRate),
      momentum(options.outerMomentum) {
  anchorAt(args);
}

void LocalSGD::anchorAt(const std::vector<HostTensor> &args) {
  slots.clear();
  if (program.localSteps <= 1)
    return;
  for (const ProgramResult &res : program.results) {
    if (res.role != ResultRole::Parameter ||
        (res.stage >= 0 && res.stage != where.stage))
      continue;
    Slot slot;
    slot.arg = static_cast<size_t>(res.arg);
    const HostTensor &t = args[slot.arg];
    int64_t n = elementCount(t.shape());
    slot.anchor.resize(n);
    for (int64_t i = 0; i < n; ++i)
      slot.anchor[i] = static_cast<float>(loadFloat(t, i));
    slot.velocity.assign(n, 0.0f);
    slots.push_back(std::move(slot));
  }
}

void LocalSGD::afterStep(int64_t step, std::vector<HostTensor> &args) {
  if (program.localSteps <= 1 || (step + 1) % program.localSteps)
    return;
  double replicas =
      static_cast<double>(where.grid.shape()[program.replicaAxis]);
  std::vector<HostTensor> params;
  for (const Slot &slot : slots)
    params.push_back(args[slot.arg]);
  syncToHost(params);
  for (Slot &slot : slots) {
    HostTensor &param = args[slot.arg];
    int64_t n = static_cast<int64_t>(slot.anchor.size());
    // Sum the replicas' deltas (f32), then step every replica alike.
    std::vector<float> delta(n), sum(n);
    for (int64_t i = 0; i < n; ++i)
      delta[i] = slot.anchor[i] - static_cast<float>(loadFloat(param, i));
    CollectiveDesc d;
    d.kind = OBER_COLL_ALL_REDUCE;
    d.dtype = DType::F32;
    d.shape = {n};
    d.group = where.replicaGroup;
    d.gridAxes = {program.replicaAxis};
    where.channel->run(d, delta.data(), sum.data());
    // The step's result may share its buffer with the program's: write a
    // new one.
    HostTensor next(param.dtype(), param.shape());
    for (int64_t i = 0; i < n; ++i) {
      double g = sum[i] / replicas;
      double v = momentum * slot.velocity[i] + g;
      slot.velocity[i] = static_cast<float>(v);
      slot.anchor[i] =
          static_cast<float>(slot.anchor[i] - lr * (g + momentum * v));
      storeFloat(next, i, slot.anchor[i]);
    }
    param = next;
  }
}

std::vector<SideState> LocalSGD::sideState() const {
  std::vector<SideState> out;
  for (const Slot &slot : slots) {
    const ProgramArg &a = program.args[slot.arg];
    for (auto [what, values] : {std::pair("anchor", &slot.anchor),
                                std::pair("velocity", &slot.velocity)}) {
      SideState state;
      state.name = sideName(what, a.name);
      state.arg = slot.arg;
      state.value = HostTensor(DType::F32, a.shape);
      for (size_t i = 0; i < values->size(); ++i)
        storeFloat(state.value, static_cast<int64_t>(i), (*values)[i]);
      out.push_back(std::move(state));
    }
  }
  return out;
}

void LocalSGD::restore(const std::vector<SideState> &side) {
  for (const SideState &state : side) {
    if (!state.found)
      continue;
    for (Slot &slot : slots) {
      if (slot.arg != state.arg)
        continue;
      bool anchor =
          state.name == sideName("anchor", program.args[slot.arg].name);
      std::vector<float> &values = anchor ? slot.anchor : slot.velocity;
      for (size_t i = 0; i < values.size(); ++i)
        values[i] =
            static_cast<float>(loadFloat(state.value, static_cast<int64_t>(i)));
    }
  }
}
