//===- CostModel.h - time of ops, collectives and pipelines -----*- C++ -*-===//
//
// Part of Ober-Train. Analytical costs on a Cluster: a roofline per op, an
// alpha-beta model per collective algorithm and link level, and the bubble
// of each pipeline schedule.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_COSTMODEL_H
#define OBER_PLANNING_COSTMODEL_H

#include "ober/Dialect/Ober/IR/OberOps.h"
#include "ober/Planning/Cluster.h"

#include "mlir/IR/Operation.h"

namespace mlir::ober::planning {

/// The work of one op.
struct OpWork {
  /// Floating-point operations (a multiply-add counts 2).
  double flops = 0;
  /// Bytes read and written at element-type width.
  double bytes = 0;
  /// Of `flops`, those that repeat forward work (attention_grad computes
  /// the scores again): hardware FLOPs, not the model's.
  double repeated = 0;
  /// The share of `flops` the lowering computes, which is what takes
  /// time (`flops` stays the model's count): a causal attention in blocks
  /// of queries skips the keys after each block's last query; the fused
  /// loops skip every masked key and their backward computes the scores
  /// three times (2 Lq Lk (5 D + 3 Dv) against the model's 3 D + 2 Dv).
  double computed = 1;
  /// True for contractions (matmul, conv, attention): their FLOPs are the
  /// model's (MFU) and run on matrix units unless `vectorUnits`.
  bool matmul = false;
  /// True for a contraction the lowering runs on vector units (attention
  /// as fused loops): priced at the f32 vector rate, not as a GEMM.
  bool vectorUnits = false;
  bool onMatrixUnits() const { return matmul && !vectorUnits; }
  /// True for normalizations, softmax, losses and GELU (exponentials,
  /// square roots, several passes): Device::specialFlops prices them.
  bool special = false;
  /// Its shape as a GEMM C[m,n] = A[m,k] B[k,n] (batch dimensions folded
  /// into m; a convolution as its implicit GEMM), when `matmul`.
  double m = 0, n = 0, k = 0;
  /// The rows of each of the independent products when B is batched too
  /// (attention's scores and their use: one GEMM per batch and head); 0
  /// when all m rows share B (a layer's weight).
  double rows = 0;
};

/// Counts the work of `op` from its static operand and result types. With
/// `floatBytes` non-zero, floating-point values count that many bytes per
/// element (the plan's precision) instead of their IR width. Attention is
/// counted as `attention` lowers it.
OpWork workOf(Operation *op, unsigned floatBytes = 0,
              const AttentionLowering &attention = {});

/// The bytes of a convolution's (conv, conv_transpose, conv_weight_grad)
/// columns when `cluster` runs convolutions as products over gathered
/// windows (Cluster::gemmConvolutions): `[groups, C / groups * K, N * S]`
/// elements, written and read once each (by the gather and the product,
/// or for the data gradient the product and the gather), the bulk of what
/// it moves besides its product's operands (the padded input's copy and
/// the channel transposes are not counted). Zero for other ops, other
/// lowerings and dynamic shapes. `floatBytes` as for workOf.
double convolutionGatherBytes(Operation *op, const Cluster &cluster,
                              unsigned floatBytes = 0);

/// The sizes of an attention or its gradient: `batch` independent [lq, lk]
/// score matrices (batch entries times heads). Null unless every operand
/// has a static shape.
struct AttentionSizes {
  int64_t batch = 0, lq = 0, lk = 0;
};
std::optional<AttentionSizes> attentionSizes(Operation *op);

/// Elements of the largest block of scores `lowering` holds at once for
/// `op` (an attention or its gradient with static shapes; zero for other
/// ops and for the fused loops): every batch entry and head of a block of
/// queries, or of all of them as one block.
double attentionScoreElements(Operation *op, const AttentionLowering &lowering);

/// Elements of a statically shaped tensor type (zero otherwise).
double typeElements(Type type);
inline double valueElements(Value v) { return typeElements(v.getType()); }

/// Bytes of a tensor type: floating-point elements at `floatBytes` when
/// non-zero, others at their own width; zero for dynamic shapes.
double typeBytes(Type type, unsigned floatBytes = 0);
inline double valueBytes(Value v, unsigned floatBytes = 0) {
  return typeBytes(v.getType(), floatBytes);
}

/// The device's peak FLOP/s for `precision` ("bf16", "f32", ...), falling
/// back to f32, then to any listed type.
double peakFlopsOf(const Device &device, StringRef precision);

/// Seconds of a GEMM of `flops` with shape (m, n, k) at `precision`: the
/// device's measured table for the type where it has one, else peak x
/// matmul efficiency.
double gemmSeconds(const Device &device, StringRef precision, double flops,
                   double m, double n, double k, bool transposedA = false);

/// Seconds a kernel moving `bytes` spends on memory traffic: the measured
/// bandwidth at that size where the device has it, else bandwidth x memory
/// efficiency.
double memorySeconds(const Device &device, double bytes);

/// Roofline time of `work` on one device of `cluster` with elements of
/// `elementType` (its peak FLOP/s; f32 when the device lists none for it).
double computeTime(const OpWork &work, Type elementType, const Cluster &cluster);

/// The same with the element type named by its peak-FLOP/s key ("bf16",
/// "f16", "f32", "f64").
double computeTime(const OpWork &work, StringRef precision,
                   const Cluster &cluster);

/// A pass's kernels as the host launches them into the device's queue, a
/// block at a time (a segment's launches and its device time, collectives
/// included, spread evenly over the block). The host never waits; the
/// device starts a kernel once it is launched and the one before has run.
/// So the pass ends after the host's launches up to some block and the
/// device's work from there on, whichever split is longest: device-bound
/// blocks absorb the launch time of host-bound ones next to them.
class LaunchQueue {
public:
  /// Appends a block: `host` seconds of launches, `device` seconds of work.
  void add(double host, double device);
  /// Seconds with the blocks run in the order added, or in reverse (a
  /// backward pass), on `d`: Device::launchOverlap 1 is the queue, 0 host
  /// and device time adding up.
  double seconds(const Device &d, bool reversed) const;

private:
  /// Totals, and the most the prefixes of the blocks' host time exceed
  /// their device time, and the reverse.
  double hostTotal = 0, deviceTotal = 0, hostAhead = 0, deviceAhead = 0;
};

/// The key of `type` in Device::peakFlops, and its width in bytes.
std::string precisionOf(Type type);
unsigned precisionBytes(StringRef precision);

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast };
enum class Algorithm { Ring, Tree, Hierarchical };

/// Time of a collective over `groupSize` devices moving `bytes` (the full
/// buffer per device), with the alpha-beta costs of the smallest link level
/// that holds the group. `Hierarchical` reduces inside nodes first and runs
/// the inter-node step on node leaders (one per node), then broadcasts.
double collectiveTime(Collective kind, Algorithm algorithm, double bytes,
                      int64_t groupSize, const Cluster &cluster);

/// The cheapest algorithm's time (ring, tree or hierarchical; trees only
/// for groups that span nodes, as NCCL does).
double bestCollectiveTime(Collective kind, double bytes, int64_t groupSize,
                          const Cluster &cluster);

/// The cheapest time of a collective over `groupSize` devices that are
/// `stride` ranks apart (ranks fill nodes in order): members in one node
/// use the inner link, members in different nodes the outer one, and a group
/// with some of each runs hierarchically.
double groupCollectiveTime(Collective kind, double bytes, int64_t groupSize,
                           int64_t stride, const Cluster &cluster);

/// Time of a point-to-point transfer of `bytes` between ranks `stride`
/// apart.
double sendTime(double bytes, int64_t stride, const Cluster &cluster);

/// The pipeline schedules, as the plan attribute names them.
using ::mlir::ober::Schedule;

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_COSTMODEL_H
