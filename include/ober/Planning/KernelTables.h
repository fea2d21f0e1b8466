//===- KernelTables.h - measured kernel and collective speeds -----*- C++ -*-===//
//
// Part of Ober-Train. What a device and a link reach in practice, as
// measured (by `ober-calibrate`, or taken from published measurements for
// the presets): GEMM throughput over a grid of shapes, memory bandwidth by
// kernel size, and collective bus bandwidth by message and group size. The
// cost model interpolates them; a device or link without a table falls back
// to its peak times an efficiency.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_PLANNING_KERNELTABLES_H
#define OBER_PLANNING_KERNELTABLES_H

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::ober::planning {

/// A measured quantity `y` at ascending sizes `x`, interpolated linearly in
/// log x and held at the end values outside them.
struct Curve {
  std::vector<double> x, y;
  bool empty() const { return x.empty(); }
  double at(double x) const;
};

/// GEMM throughput (FLOP/s) of C[M,N] = A[M,K] B[K,N] measured at every
/// combination of the ascending sizes `m`, `n`, `k`; `flops` is m-major
/// (index (i * |n| + j) * |k| + l).
struct GemmTable {
  std::vector<double> m, n, k, flops;
  /// The same grid with A read transposed (a weight gradient X^T dY), where
  /// a library is slower at it; empty: as `flops`.
  std::vector<double> flopsTransposedA;
  bool empty() const { return flops.empty(); }
  /// Throughput at a shape: trilinear in log M, log N, log K. Below the
  /// smallest size measured along a dimension the kernel takes as long as
  /// at that size (throughput falls in proportion); above the largest the
  /// throughput stays.
  double rate(double M, double N, double K, bool transposedA = false) const;
};

/// Bus bandwidth of collectives (nccl-tests' definition: the algorithm
/// bandwidth times 2(p-1)/p for an all-reduce, (p-1)/p for gathers and
/// scatters), in bytes/s by the bytes of the buffer, per group size.
struct BusBandwidthTable {
  std::map<int64_t, Curve> byGroup;
  bool empty() const { return byGroup.empty(); }
  /// The smallest message measured for the group size nearest `group`.
  double smallestBytes(int64_t group) const;
  /// Bus bandwidth of `bytes` among `group` devices: the measured group
  /// sizes on either side, interpolated in log group size.
  double at(double bytes, int64_t group) const;
};

/// JSON forms (see docs/design/Planning.md). Readers name the offending
/// field in `error` (prefixed with `path`) and check sizes and values.
llvm::json::Value toJSON(const Curve &curve, const char *xKey,
                         const char *yKey);
llvm::json::Value toJSON(const GemmTable &table);
llvm::json::Value toJSON(const BusBandwidthTable &table);
bool curveFromJSON(const llvm::json::Value &v, const std::string &path,
                   const char *xKey, const char *yKey, double lo, double hi,
                   Curve &out, std::string &error);
bool gemmTableFromJSON(const llvm::json::Value &v, const std::string &path,
                       GemmTable &out, std::string &error);
bool busBandwidthFromJSON(const llvm::json::Value &v, const std::string &path,
                          BusBandwidthTable &out, std::string &error);

} // namespace mlir::ober::planning

#endif // OBER_PLANNING_KERNELTABLES_H
