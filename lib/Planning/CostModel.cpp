//===- CostModel.cpp - time of ops, collectives and pipelines -------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/CostModel.h"

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Transforms/AttentionBlocks.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::ober;
using namespace mlir::ober::planning;

double mlir::ober::planning::typeElements(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  if (!r || !r.hasStaticShape())
    return 0;
  return static_cast<double>(r.getNumElements());
}

double mlir::ober::planning::typeBytes(Type t, unsigned floatBytes) {
  auto r = dyn_cast<RankedTensorType>(t);
  if (!r || !r.hasStaticShape() || !r.getElementType().isIntOrFloat())
    return 0;
  if (floatBytes && isa<FloatType>(r.getElementType()))
    return typeElements(t) * floatBytes;
  unsigned bits = r.getElementType().getIntOrFloatBitWidth();
  return typeElements(t) * std::max(1u, bits / 8);
}

double mlir::ober::planning::peakFlopsOf(const Device &d, StringRef precision) {
  auto it = d.peakFlops.find(precision.str());
  if (it == d.peakFlops.end())
    it = d.peakFlops.find("f32");
  return it != d.peakFlops.end() ? it->second : d.peakFlops.begin()->second;
}

namespace {
ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}
} // namespace

/// The share of an attention's score products `lowering` computes:
/// ober-block-attention's blocks (AttentionBlocks.h; one when decomposed,
/// the flash kernels' tiles of queries), each seeing keys up to its last
/// query when causal; the fused loops, the keys each query sees.
static double computedShare(Operation *attention, double batch, double lq,
                            double lk, const AttentionLowering &lowering) {
  if (!attention->hasAttr("is_causal") || batch < 1 || lq < 1 || lk < 1)
    return 1;
  double computed = 0;
  if (lowering.kind == AttentionLowering::Fused) {
    // Query i sees keys 0..i: min(i + 1, lk) of them.
    double full = std::min(lq, lk);
    computed = full * (full + 1) / 2 + (lq - full) * lk;
    return computed / (lq * lk);
  }
  for (const AttentionBlock &b :
       attentionBlocks(static_cast<int64_t>(batch), static_cast<int64_t>(lq),
                       static_cast<int64_t>(lk), /*causal=*/true,
                       lowering.blockSize(static_cast<int64_t>(lq))))
    computed += double(b.queries) * double(b.keys);
  return computed / (lq * lk);
}

std::optional<AttentionSizes>
mlir::ober::planning::attentionSizes(Operation *op) {
  if (!isa<AttentionOp, AttentionGradOp>(op) ||
      !llvm::all_of(op->getOperandTypes(), [](Type t) {
        return cast<RankedTensorType>(t).hasStaticShape();
      }))
    return std::nullopt;
  auto query = cast<RankedTensorType>(op->getOperand(0).getType());
  ArrayRef<int64_t> q = query.getShape(), k = shapeOf(op->getOperand(1));
  AttentionSizes s;
  s.lq = q[q.size() - 2];
  s.lk = k[k.size() - 2];
  s.batch = s.lq * q.back() ? query.getNumElements() / (s.lq * q.back()) : 0;
  return s;
}

double
mlir::ober::planning::attentionScoreElements(Operation *op,
                                             const AttentionLowering &lowering) {
  std::optional<AttentionSizes> s = attentionSizes(op);
  if (!s || s->batch < 1 || s->lk < 1 || lowering.holdsNoScores())
    return 0;
  double largest = 0;
  for (const AttentionBlock &b :
       attentionBlocks(s->batch, s->lq, s->lk, op->hasAttr("is_causal"),
                       lowering.blockSize(s->lq)))
    largest = std::max(largest, double(b.queries) * double(b.keys));
  return double(s->batch) * largest;
}

namespace {
/// Bytes of the columns (im2col) of a convolution lowered to products:
/// `[groups, C / groups * K, N * S]` of `input`'s element, where `weight`
/// is `[O, C / groups, K...]` and `outputSide` `[N, O, S...]` (the
/// convolution's result, or the gradient of it its gradients take).
double columnBytes(Value input, Value weight, Value outputSide, int64_t groups,
                   unsigned floatBytes) {
  double in = valueElements(input), w = valueElements(weight);
  if (in == 0 || w == 0)
    return 0;
  double o = shapeOf(weight)[0];
  return w / o * double(groups) * (valueElements(outputSide) / o) *
         (valueBytes(input, floatBytes) / in);
}
} // namespace

double mlir::ober::planning::convolutionGatherBytes(Operation *op,
                                                    const Cluster &cluster,
                                                    unsigned floatBytes) {
  if (!cluster.gemmConvolutions)
    return 0;
  double columns =
      llvm::TypeSwitch<Operation *, double>(op)
          .Case([&](ConvOp c) {
            return columnBytes(c.getInput(), c.getWeight(), c.getResult(),
                               c.getGroups(), floatBytes);
          })
          .Case([&](ConvTransposeOp c) {
            return columnBytes(c.getInput(), c.getWeight(), c.getInput(),
                               c.getGroups(), floatBytes);
          })
          .Case([&](ConvWeightGradOp c) {
            return columnBytes(c.getInput(), c.getResult(), c.getOutputGrad(),
                               c.getGroups(), floatBytes);
          })
          .Default([](Operation *) { return 0.0; });
  return 2 * columns;
}

OpWork mlir::ober::planning::workOf(Operation *op, unsigned floatBytes,
                                    const AttentionLowering &lowering) {
  OpWork w;
  for (Value v : op->getOperands())
    w.bytes += valueBytes(v, floatBytes);
  for (Value v : op->getResults())
    w.bytes += valueBytes(v, floatBytes);
  double out = op->getNumResults() ? typeElements(op->getResult(0).getType()) : 0;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](MatmulOp m) {
        // Every output element is a K-long dot product.
        ArrayRef<int64_t> a = shapeOf(m.getLhs());
        ArrayRef<int64_t> r = shapeOf(m.getResult());
        w.flops = 2 * out * a.back();
        w.matmul = true;
        w.k = a.back();
        w.n = r.empty() ? 1 : r.back();
        w.m = out / w.n;
        // A batched B: one product per B batch entry (fewer than A's
        // where B broadcasts), over the rows that share it.
        ArrayRef<int64_t> b = shapeOf(m.getRhs());
        if (b.size() > 2) {
          double products = 1;
          for (int64_t d : b.drop_back(2))
            products *= d;
          w.rows = w.m / products;
        }
      })
      .Case([&](ConvOp c) {
        ArrayRef<int64_t> k = shapeOf(c.getWeight());
        double perOutput = 1;
        for (int64_t d : k.drop_front())
          perOutput *= d; // C/groups * K...
        w.flops = 2 * out * perOutput;
        w.matmul = true;
        w.n = k[0];
        w.k = perOutput;
        w.m = out / w.n;
      })
      .Case([&](ConvTransposeOp c) {
        ArrayRef<int64_t> k = shapeOf(c.getWeight());
        double perInput = 1;
        for (int64_t d : k.drop_front())
          perInput *= d; // O/groups * K...
        w.flops = 2 * typeElements(c.getInput().getType()) * perInput;
        w.matmul = true;
        w.m = typeElements(c.getInput().getType()) / k[0];
        w.k = k[0];
        w.n = perInput;
      })
      .Case([&](ConvWeightGradOp c) {
        ArrayRef<int64_t> g = shapeOf(c.getOutputGrad());
        double perWeight = g[0];
        for (int64_t d : g.drop_front(2))
          perWeight *= d;
        w.flops = 2 * out * perWeight;
        w.matmul = true;
        w.k = perWeight;
        w.n = shapeOf(c.getResult())[0];
        w.m = out / w.n;
      })
      .Case<AttentionOp, AttentionGradOp>([&](Operation *a) {
        // Forward: QK^T and PV, 2 * Lq * Lk * (D + Dv) per batch-head (the
        // softmax is small next to them and not counted). Backward: the
        // scores again, dV, dP, dQ and dK: 2 * Lq * Lk * (3 D + 2 Dv).
        Value query = a->getOperand(0);
        ArrayRef<int64_t> q = shapeOf(query), k = shapeOf(a->getOperand(1)),
                          v = shapeOf(a->getOperand(2));
        double batch = typeElements(query.getType()) / (q[q.size() - 2] * q.back());
        double lq = q[q.size() - 2], lk = k[k.size() - 2];
        bool backward = isa<AttentionGradOp>(a);
        w.flops = batch * 2 * lq * lk *
                  (backward ? 3 * q.back() + 2 * v.back() : q.back() + v.back());
        if (backward)
          w.repeated = batch * 2 * lq * lk * q.back();
        w.computed = computedShare(a, batch, lq, lk, lowering);
        w.matmul = true;
        double d = q.back(), dv = v.back();
        if (lowering.kind == AttentionLowering::Fused) {
          w.vectorUnits = true;
          if (backward)
            w.computed *= (5 * d + 3 * dv) / (3 * d + 2 * dv);
        }
        // The flash kernels' backward pass computes the scores once more
        // for each row's log-sum-exp.
        if (lowering.kind == AttentionLowering::Flash && backward)
          w.computed *= (4 * d + 2 * dv) / (3 * d + 2 * dv);
        // As the scores' GEMM, batched over batch and heads.
        w.m = batch * lq;
        w.n = lk;
        w.k = q.back();
        w.rows = lq;
      })
      .Default([&](Operation *) {
        // Elementwise and data movement: about one operation per input
        // element (reductions, norms and softmax a few).
        double in = 0;
        for (Value v : op->getOperands())
          in = std::max(in, typeElements(v.getType()));
        w.special = isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RMSNormOp,
                        BatchNormTrainingOp, CrossEntropyOp, GeluOp>(op);
        w.flops = (w.special ? 5 : 1) * std::max(in, out);
      });
  return w;
}

std::string mlir::ober::planning::precisionOf(Type type) {
  Type e = getElementTypeOrSelf(type);
  return e.isBF16() ? "bf16" : e.isF16() ? "f16" : e.isF64() ? "f64" : "f32";
}

unsigned mlir::ober::planning::precisionBytes(StringRef precision) {
  return precision == "f64" ? 8 : precision == "f32" ? 4 : 2;
}

static double vectorRate(const Device &d, StringRef precision, bool special);

double mlir::ober::planning::computeTime(const OpWork &work, Type elementType,
                                         const Cluster &cluster) {
  return computeTime(work, precisionOf(elementType), cluster);
}

double mlir::ober::planning::computeTime(const OpWork &work,
                                         StringRef precision,
                                         const Cluster &cluster) {
  const Device &d = cluster.device;
  // Elementwise work does not reach matrix-unit peaks.
  double flops = work.flops * work.computed;
  // Contractions on vector units compute in f32.
  double flopsTime =
      work.onMatrixUnits()
          ? gemmSeconds(d, precision, flops, work.m, work.n, work.k)
          : flops / vectorRate(d, work.vectorUnits ? "f32" : precision,
                               work.special);
  return std::max(flopsTime, memorySeconds(d, work.bytes));
}

/// FLOP/s of elementwise and reduction work: as measured where the device
/// has the figure, else peak x memory efficiency.
static double vectorRate(const Device &d, StringRef precision, bool special) {
  double measured = special && d.specialFlops > 0 ? d.specialFlops
                                                  : d.vectorFlops;
  return measured > 0 ? measured
                      : peakFlopsOf(d, precision) * d.memoryEfficiency;
}

double mlir::ober::planning::gemmSeconds(const Device &d, StringRef precision,
                                         double flops, double m, double n,
                                         double k, bool transposedA) {
  if (flops <= 0)
    return 0;
  auto table = d.gemm.find(precision.str());
  if (table != d.gemm.end() && m > 0 && n > 0 && k > 0)
    return flops / table->second.rate(m, n, k, transposedA);
  return flops / (peakFlopsOf(d, precision) * d.matmulEfficiency);
}

void LaunchQueue::add(double host, double device) {
  hostTotal += host;
  deviceTotal += device;
  hostAhead = std::max(hostAhead, hostTotal - deviceTotal);
  deviceAhead = std::max(deviceAhead, deviceTotal - hostTotal);
}

double LaunchQueue::seconds(const Device &d, bool reversed) const {
  // In order: the host's launches of the blocks before a split, then the
  // device's work from it on; reversed, the other way round.
  double queued =
      reversed ? hostTotal + deviceAhead : deviceTotal + hostAhead;
  return queued + (1 - d.launchOverlap) * (hostTotal + deviceTotal - queued);
}

bool Device::SoftmaxFusion::fused(double batches, double keys) const {
  if (batchMultiple <= 0)
    return true;
  auto whole = static_cast<int64_t>(std::llround(batches));
  return whole % batchMultiple == 0 && (maxKeys <= 0 || keys <= maxKeys);
}

double mlir::ober::planning::memorySeconds(const Device &d, double bytes) {
  if (bytes <= 0)
    return 0;
  if (!d.bandwidthBySize.empty())
    return bytes / d.bandwidthBySize.at(bytes);
  return bytes / (d.memoryBandwidth * d.memoryEfficiency);
}

/// The innermost link level whose groups hold `groupSize` devices.
static const LinkLevel &levelFor(int64_t groupSize, const Cluster &cluster) {
  for (const LinkLevel &l : cluster.links)
    if (l.groupSize >= groupSize)
      return l;
  return cluster.links.back();
}

/// Algorithm bandwidth over bus bandwidth (nccl-tests' definitions).
static double busFactor(Collective kind, double p) {
  switch (kind) {
  case Collective::AllReduce:
    return 2 * (p - 1) / p;
  case Collective::AllGather:
  case Collective::ReduceScatter:
  case Collective::AllToAll:
    return (p - 1) / p;
  case Collective::Broadcast:
    return 1;
  }
  return 1;
}

/// A collective inside one group of `level` from its measured bus
/// bandwidth. Below the smallest message measured, the time goes linearly
/// from the latency of the ring's steps to that message's.
static double measuredCollectiveTime(Collective kind, double bytes,
                                     int64_t groupSize, const LinkLevel &level) {
  double p = static_cast<double>(groupSize);
  auto measured = [&](double b) {
    return b * busFactor(kind, p) / level.busBandwidth.at(b, groupSize);
  };
  double smallest = level.busBandwidth.smallestBytes(groupSize);
  if (bytes >= smallest)
    return measured(bytes);
  double steps = kind == Collective::AllReduce ? 2 * (p - 1) : p - 1;
  double floor = steps * level.latency;
  return floor + (measured(smallest) - floor) * bytes / smallest;
}

double mlir::ober::planning::collectiveTime(Collective kind, Algorithm algorithm,
                                            double bytes, int64_t groupSize,
                                            const Cluster &cluster) {
  if (groupSize <= 1 || bytes <= 0)
    return 0;
  double p = static_cast<double>(groupSize);
  if (algorithm == Algorithm::Hierarchical && cluster.links.size() > 1 &&
      groupSize > cluster.devicesPerNode &&
      groupSize % cluster.devicesPerNode == 0) {
    // Reduce-scatter inside nodes, the collective across node leaders on
    // their share, then all-gather inside nodes.
    int64_t local = cluster.devicesPerNode, remote = groupSize / local;
    double inner = collectiveTime(Collective::ReduceScatter, Algorithm::Ring,
                                  bytes, local, cluster) +
                   collectiveTime(Collective::AllGather, Algorithm::Ring, bytes,
                                  local, cluster);
    const LinkLevel &outer = cluster.links.back();
    double share = bytes / local;
    double steps = kind == Collective::AllReduce ? 2 * (remote - 1) : remote - 1;
    double across = steps * (outer.latency + share / remote / outer.bandwidth);
    return (kind == Collective::AllReduce ? inner : inner / 2) + across;
  }
  const LinkLevel &l = levelFor(groupSize, cluster);
  double alpha = l.latency, beta = 1.0 / l.bandwidth;
  if (!l.busBandwidth.empty())
    return measuredCollectiveTime(kind, bytes, groupSize, l);
  if (algorithm == Algorithm::Tree) {
    // Pipelined binary trees: log2(p) latency steps, about n/B of transfer
    // each way for an all-reduce.
    double depth = std::ceil(std::log2(p));
    double volume = kind == Collective::AllReduce ? 2 * bytes : bytes;
    return depth * alpha + volume * beta;
  }
  switch (kind) { // ring
  case Collective::AllReduce:
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * bytes * beta;
  case Collective::AllGather:
  case Collective::ReduceScatter:
    return (p - 1) * alpha + (p - 1) / p * bytes * beta;
  case Collective::AllToAll:
    return (p - 1) * alpha + (p - 1) / p * bytes * beta;
  case Collective::Broadcast:
    return (p - 1) * alpha + bytes * beta;
  }
  return 0;
}

double mlir::ober::planning::bestCollectiveTime(Collective kind, double bytes,
                                                int64_t groupSize,
                                                const Cluster &cluster) {
  double best = collectiveTime(kind, Algorithm::Ring, bytes, groupSize, cluster);
  // Trees pay off across nodes; inside a node NCCL runs rings.
  bool acrossNodes = cluster.links.size() > 1 && groupSize > cluster.devicesPerNode;
  if (acrossNodes &&
      (kind == Collective::AllReduce || kind == Collective::Broadcast))
    best = std::min(best, collectiveTime(kind, Algorithm::Tree, bytes,
                                         groupSize, cluster));
  return std::min(best, collectiveTime(kind, Algorithm::Hierarchical, bytes,
                                       groupSize, cluster));
}

double mlir::ober::planning::groupCollectiveTime(Collective kind, double bytes,
                                                 int64_t groupSize,
                                                 int64_t stride,
                                                 const Cluster &cluster) {
  if (groupSize <= 1 || bytes <= 0)
    return 0;
  int64_t perNode = cluster.devicesPerNode;
  // Members of the group that share a node.
  int64_t local = std::clamp<int64_t>(perNode / std::max<int64_t>(stride, 1),
                                      1, groupSize);
  if (local >= groupSize || cluster.links.size() < 2)
    return bestCollectiveTime(kind, bytes, groupSize, cluster);
  const LinkLevel &outer = cluster.links.back();
  double p = static_cast<double>(groupSize);
  auto ring = [&](double n, double size) {
    double steps = kind == Collective::AllReduce ? 2 * (n - 1) : n - 1;
    double volume = kind == Collective::AllReduce ? 2 * (n - 1) / n * size
                    : kind == Collective::Broadcast ? size
                                                    : (n - 1) / n * size;
    return steps * outer.latency + volume / outer.bandwidth;
  };
  if (local == 1) {
    double tree = std::ceil(std::log2(p)) * outer.latency +
                  (kind == Collective::AllReduce ? 2 : 1) * bytes /
                      outer.bandwidth;
    bool treeable =
        kind == Collective::AllReduce || kind == Collective::Broadcast;
    return treeable ? std::min(ring(p, bytes), tree) : ring(p, bytes);
  }
  // Inside nodes over the inner link, then across nodes on each member's
  // share (every device has its own network port).
  double inner = bestCollectiveTime(kind == Collective::AllReduce
                                        ? Collective::ReduceScatter
                                        : kind,
                                    bytes, local, cluster);
  if (kind == Collective::AllReduce)
    inner *= 2;
  double remote = static_cast<double>(groupSize / local);
  return inner + ring(remote, bytes / local);
}

double mlir::ober::planning::sendTime(double bytes, int64_t stride,
                                      const Cluster &cluster) {
  if (bytes <= 0)
    return 0;
  const LinkLevel &l = stride < cluster.devicesPerNode || cluster.links.size() < 2
                           ? cluster.links.front()
                           : cluster.links.back();
  return l.latency + bytes / l.bandwidth;
}
