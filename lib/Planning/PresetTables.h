//===- PresetTables.h - measured and derived speeds of the presets -*- C++ -*-===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_PLANNING_PRESETTABLES_H
#define OBER_LIB_PLANNING_PRESETTABLES_H

#include "ober/Planning/KernelTables.h"

namespace mlir::ober::planning {

/// A GPU's GEMMs as output tiles over its streaming multiprocessors.
struct TiledGemm {
  double peak = 0;            // FLOP/s
  double multiprocessors = 1; // SMs (or Xe cores)
  double tile = 128;          // output tile edge
  double efficiency = 0.78;   // of peak, in a full wave's steady state
  double depthOverhead = 128; // K-loop prologue and epilogue, in K steps
};

/// The throughput of `g` on a grid of powers of two from 32 to 65536.
GemmTable tiledGemmTable(const TiledGemm &g);

/// Measured all-reduce bus bandwidth inside one node of A100 SXM GPUs.
BusBandwidthTable a100NvlinkAllReduce();

} // namespace mlir::ober::planning

#endif // OBER_LIB_PLANNING_PRESETTABLES_H
