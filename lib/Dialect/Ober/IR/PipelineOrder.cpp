//===- PipelineOrder.cpp - the passes one pipeline stage runs -------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Dialect/Ober/IR/PipelineOrder.h"

#include <algorithm>

using namespace mlir::ober;

llvm::SmallVector<PipelinePass>
mlir::ober::pipelineOrder(Schedule schedule, unsigned p, unsigned stage,
                          unsigned m, unsigned chunks) {
  using K = PipelinePass::Kind;
  unsigned v = p > 1 ? std::max(chunks, 1u) : 1;
  llvm::SmallVector<PipelinePass> order;
  // Interleaved 1F1B (Narayanan et al.): forwards go through the chunks in
  // rounds of p micro-batches, backwards through them in reverse; warm-up
  // of (p - stage - 1) * 2 + (v - 1) * p forwards.
  if (v > 1 && m % p == 0) {
    unsigned total = m * v;
    auto forwardAt = [&](unsigned k) {
      return PipelinePass{(k / (p * v)) * p + k % p, K::Forward, (k / p) % v};
    };
    auto backwardAt = [&](unsigned k) {
      return PipelinePass{(k / (p * v)) * p + k % p, K::Backward,
                          v - 1 - (k / p) % v};
    };
    unsigned warm = std::min(total, (p - stage - 1) * 2 + (v - 1) * p);
    for (unsigned k = 0; k < warm; ++k)
      order.push_back(forwardAt(k));
    for (unsigned k = 0; k + warm < total; ++k) {
      order.push_back(forwardAt(k + warm));
      order.push_back(backwardAt(k));
    }
    for (unsigned k = total - warm; k < total; ++k)
      order.push_back(backwardAt(k));
    return order;
  }
  // Otherwise each micro-batch's chunks run within its pass: forwards in
  // chunk order, backwards in reverse.
  auto pass = [&](unsigned i, K kind) {
    for (unsigned c = 0; c < v; ++c)
      order.push_back({i, kind, kind == K::Forward ? c : v - 1 - c});
  };
  if (schedule == Schedule::GPipe) {
    for (unsigned i = 0; i < m; ++i)
      pass(i, K::Forward);
    for (unsigned i = 0; i < m; ++i)
      pass(i, K::Backward);
    return order;
  }
  // 1F1B: warm-up forwards, then one forward and one backward, then the
  // remaining backwards. Zero-bubble (ZB-H1, Qi et al. 2024) splits each
  // backward pass and runs the weight-gradient part up to `stage` passes
  // later: the later stages, which hold fewer micro-batches in flight, send
  // the input gradients the earlier stages wait for first, and the drain's
  // idle time fills with weight gradients (a bubble of (p - 1)(F + B - W)).
  bool zeroBubble = schedule == Schedule::ZeroBubble;
  unsigned warm = std::min(m, p - stage - 1), delay = stage;
  llvm::SmallVector<unsigned> pending;
  auto backward = [&](unsigned i) {
    pass(i, K::Backward);
    if (!zeroBubble)
      return;
    pending.push_back(i);
    if (pending.size() > delay) {
      order.push_back({pending.front(), K::Weight, 0});
      pending.erase(pending.begin());
    }
  };
  for (unsigned i = 0; i < warm; ++i)
    pass(i, K::Forward);
  for (unsigned i = 0; i + warm < m; ++i) {
    pass(i + warm, K::Forward);
    backward(i);
  }
  for (unsigned i = m - warm; i < m; ++i)
    backward(i);
  for (unsigned i : pending)
    order.push_back({i, K::Weight, 0});
  return order;
}
