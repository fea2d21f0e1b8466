//===- Cluster.h - the machines a plan runs on ------------------*- C++ -*-===//
//
// Part of Ober-Train. A cluster is data (a JSON file, a preset, or the
// module attribute `ober.cluster`), so every planner decision names its
// machine and is reproducible.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_CLUSTER_H
#define OBER_PLANNING_CLUSTER_H

#include "ober/Planning/KernelTables.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ober::planning {

/// One accelerator (or CPU socket).
struct Device {
  std::string name;
  /// Dense peak FLOP/s by element type ("f32", "tf32", "bf16", "f16", "f8").
  std::map<std::string, double> peakFlops;
  double memoryBytes = 0;
  /// Memory bandwidth in bytes/s.
  double memoryBandwidth = 0;
  /// Achievable fractions of peak: "matmul" (of peak FLOP/s) and "memory"
  /// (of memory bandwidth). Defaults until the cost model is calibrated.
  double matmulEfficiency = 0.75;
  double memoryEfficiency = 0.8;
  /// FLOP/s of elementwise and reduction work (workOf's count) as the
  /// generated code reaches it: simple arithmetic, and normalizations,
  /// softmax, losses and GELU; 0: peak x memoryEfficiency (the special
  /// kind: as the simple one).
  double vectorFlops = 0, specialFlops = 0;
  /// Fixed cost of one kernel on the device (start and tail), seconds.
  double kernelOverhead = 3e-6;
  /// Host seconds to launch one kernel: a pass takes at least its kernels
  /// times this (the host runs ahead of the device until it is the slower).
  double launchOverhead = 0;
  /// How far a pass's launch time and device time overlap: 1 as far as
  /// the launch queue allows (LaunchQueue: the host runs ahead), 0 not at
  /// all (they add); in between, the blend.
  double launchOverlap = 1;
  /// Seconds a pipeline transfer blocks each of its two devices beyond
  /// moving the bytes (a blocking send/receive's synchronization).
  double transferOverhead = 0;
  /// Measured GEMM throughput by element type (keys as peakFlops); where
  /// one is given it replaces peak x matmulEfficiency for that type.
  std::map<std::string, GemmTable> gemm;
  /// Measured memory bandwidth (bytes/s) by the bytes a kernel moves; where
  /// given it replaces memoryBandwidth x memoryEfficiency.
  Curve bandwidthBySize;
  /// When the kernel library's fused attention softmax (scale, mask and
  /// softmax in one kernel) applies; outside it, the softmax runs as
  /// `fallbackKernels` separate kernels in each pass, each reading and
  /// writing the scores in f32. Megatron-LM's FusedScaleMaskSoftmax: the
  /// score batches a device holds (micro-batch x heads) a multiple of 4,
  /// at most 4096 keys; otherwise PyTorch's unfused path (to f32, scale,
  /// mask, softmax, back: 5 kernels). Unset (batchMultiple 0): always
  /// fused, as the project's generated code is.
  struct SoftmaxFusion {
    int64_t batchMultiple = 0, maxKeys = 0;
    double fallbackKernels = 0;
    /// Whether a softmax over `batches` rows of `keys` runs fused.
    bool fused(double batches, double keys) const;
  } softmaxFusion;
  /// Whether full recomputation runs a segment's whole forward pass again,
  /// with its collectives, as activation checkpointing that reruns each
  /// layer's function does (Megatron-LM, torch.utils.checkpoint). Unset:
  /// it rebuilds only what the backward pass reads (TPProfile::neededMatmul),
  /// as the project's partitioner does.
  bool recomputeWholeForward = false;
};

/// One level of the interconnect. Levels go from the innermost (devices in a
/// node) to the outermost (nodes in the cluster).
struct LinkLevel {
  std::string name;
  /// Devices in one group at this level (e.g. 8 per node); the outermost
  /// level spans the whole cluster.
  int64_t groupSize = 1;
  /// Bandwidth per device and direction, bytes/s.
  double bandwidth = 0;
  /// Latency of one message, seconds.
  double latency = 0;
  /// Measured collective bus bandwidth inside groups of this level; where
  /// given it replaces the alpha-beta model for the sizes it covers.
  BusBandwidthTable busBandwidth;
};

/// How the compiled code runs `ober.attention` and `ober.attention_grad`
/// (ober-compile --attention, --attention-block): what the cost model
/// prices. A compile option rather than hardware: not part of the JSON.
struct AttentionLowering {
  /// In blocks of queries (`ober-block-attention`), their products on the
  /// matrix units; as one block (the whole score matrix); as the fused
  /// loops that hold no scores (on vector units, in f32); or as CUDA's
  /// flash kernels (tiles of OBER_ATTENTION_TILE queries and keys on the
  /// matrix units, no scores in memory).
  enum Kind : uint8_t { Blocked, Decomposed, Fused, Flash } kind = Blocked;
  /// Blocked: queries a block (0: attentionBlocks' choice).
  int64_t blockQueries = 0;
  /// The blockQueries argument of attentionBlocks and blockAttention for
  /// an attention of `queries` queries (decomposed: one block of them all).
  int64_t blockSize(int64_t queries) const;
  /// Whether no scores are held in memory (fused loops, flash kernels).
  bool holdsNoScores() const { return kind == Fused || kind == Flash; }
  /// "blocked", "decomposed", "fused" or "flash" and a block size >= 0;
  /// null with `error` naming the option and what is accepted.
  static std::optional<AttentionLowering> parse(StringRef kind, int64_t block,
                                                std::string &error);
};

struct Cluster {
  std::string name;
  Device device;
  /// How the compiled code runs attention.
  AttentionLowering attention;
  /// Whether the compiled code runs convolutions as matrix products over
  /// gathered windows (`convolutions=gemm`, the CUDA target's) rather than
  /// the kernel library's.
  bool gemmConvolutions = false;
  int64_t devicesPerNode = 1;
  int64_t nodes = 1;
  /// Innermost first: intra-node, then inter-node.
  std::vector<LinkLevel> links;

  int64_t numDevices() const { return devicesPerNode * nodes; }

  /// Checks every field; the error names the field and the problem.
  LogicalResult verify(std::string &error) const;

  llvm::json::Value toJSON() const;
  DictionaryAttr toAttr(MLIRContext *context) const;
};

/// The names of the presets (`a100-40gb`, `a100-80gb`, `h100-sxm`,
/// `h200-sxm`, `max-1550`, `cpu`).
std::vector<std::string> presetNames();

/// A preset cluster of one node.
std::optional<Cluster> preset(const std::string &name);

/// Parses a cluster from JSON; `error` names the offending field.
std::optional<Cluster> clusterFromJSON(const llvm::json::Value &json,
                                       std::string &error);

/// Reads a cluster: a preset name or a JSON file, then `gpus` devices in
/// total (filling nodes of the preset's size; fewer than one node shrinks
/// the node) and/or `nodes` nodes; an unset count stays as it is.
std::optional<Cluster> loadCluster(const std::string &nameOrPath,
                                   std::optional<int64_t> gpus,
                                   std::optional<int64_t> nodes,
                                   std::string &error);

/// Gives `cluster` `gpus` devices in total and/or `nodes` nodes, as
/// loadCluster does.
LogicalResult resizeCluster(Cluster &cluster, std::optional<int64_t> gpus,
                            std::optional<int64_t> nodes, std::string &error);

/// The value of a count option (`gpus=`, `nodes=`) the user set, nullopt
/// when unset; an explicit 0 is a value, which loadCluster refuses.
template <typename Option>
std::optional<int64_t> givenCount(const Option &option) {
  return option.hasValue() ? std::optional<int64_t>(option) : std::nullopt;
}

/// Reads the module attribute form.
std::optional<Cluster> clusterFromAttr(DictionaryAttr attr, std::string &error);

/// Sets how the compiled code runs attention (`attention=`,
/// `attention-block=`) and convolutions (`convolutions=`: library or
/// gemm), as ober-plan's options give them; failure with `error` naming
/// the option and what it takes.
LogicalResult setLowering(Cluster &cluster, StringRef attention,
                          int64_t attentionBlock, StringRef convolutions,
                          std::string &error);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_CLUSTER_H
