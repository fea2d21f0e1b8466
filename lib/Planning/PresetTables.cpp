//===- PresetTables.cpp - measured and derived speeds of the presets ------===//
//
// Part of Ober-Train. Where the presets' kernel and collective tables come
// from: published measurements where there are some (nccl-tests on A100s),
// and for GEMMs a model of how a GPU runs them (output tiles spread over the
// streaming multiprocessors in waves; a K loop with a fixed prologue and
// epilogue) from the datasheet's peak and SM count. `ober-calibrate`
// replaces both with what it measures, or fits them to measured steps.
//
//===----------------------------------------------------------------------===//

#include "PresetTables.h"

#include <cmath>

using namespace mlir::ober::planning;

GemmTable mlir::ober::planning::tiledGemmTable(const TiledGemm &g) {
  GemmTable t;
  // Powers of two and the halfway sizes between them (1.5 x), where the
  // tile counts of transformer GEMMs (3h, 4h, h/t) often fall.
  for (double s = 32; s <= 65536; s *= 2) {
    t.m.push_back(s);
    if (s < 65536)
      t.m.push_back(s * 1.5);
  }
  t.n = t.k = t.m;
  for (double m : t.m)
    for (double n : t.n)
      for (double k : t.k) {
        double tiles = std::ceil(m / g.tile) * std::ceil(n / g.tile);
        double waves = std::ceil(tiles / g.multiprocessors);
        // The share of the SMs' tile slots the output fills, and of the
        // K loop that is steady state.
        double filled = m * n / (waves * g.multiprocessors * g.tile * g.tile);
        double steady = k / (k + g.depthOverhead);
        t.flops.push_back(g.peak * g.efficiency * filled * steady);
      }
  return t;
}

BusBandwidthTable mlir::ober::planning::a100NvlinkAllReduce() {
  // nccl-tests all_reduce_perf, float, on 2, 4 and 8 A100 SXM GPUs of one
  // node (NVLink 3, NVSwitch), measured by the vTrain project (VIA Research
  // Group, KAIST): bus bandwidth in GB/s at 1 MiB, 2 MiB, ..., 1 GiB, the
  // mean of out-of-place and in-place.
  static const double two[] = {23.5,  40.1,  69.1,  96.3,  128.4, 146.2,
                               166.0, 175.5, 184.5, 189.3, 197.1};
  static const double four[] = {30.2,  56.3,  82.2,  109.3, 140.8, 177.9,
                                185.7, 201.4, 208.8, 216.5, 221.6};
  static const double eight[] = {19.8,  39.4,  77.3,  111.2, 126.7, 164.5,
                                 202.6, 201.8, 217.5, 224.3, 229.3};
  BusBandwidthTable t;
  for (auto [group, gbps] :
       {std::pair(2, two), std::pair(4, four), std::pair(8, eight)}) {
    Curve &c = t.byGroup[group];
    for (int i = 0; i < 11; ++i) {
      c.x.push_back(std::ldexp(1.0, 20 + i));
      c.y.push_back(gbps[i] * 1e9);
    }
  }
  return t;
}
