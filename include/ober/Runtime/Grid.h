//===- Grid.h - ranks on a device grid and the blocks they hold -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A plan places its devices on a
// grid (`shard.grid`, e.g. [dp, tp, pp]); ranks are numbered row-major.
// A collective runs within the groups of ranks that differ only on the
// grid axes it names; a tensor split over grid axes gives each rank one
// block per group of the dimension (`ober.split`, `ober.split_groups`).
// The interpreter's simulated devices and the executables both use these
// rules, so the two place every element alike.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_GRID_H
#define OBER_RUNTIME_GRID_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ober::rt {

class Grid {
public:
  Grid() = default;
  explicit Grid(std::vector<int64_t> shape);

  const std::vector<int64_t> &shape() const { return dims; }
  int64_t size() const { return count; }

  /// The coordinates of `rank` (row-major).
  std::vector<int64_t> coordinates(int64_t rank) const;
  /// The rank at `coords`.
  int64_t rankAt(const std::vector<int64_t> &coords) const;
  /// `rank` with its coordinates on `axes` replaced by `coords`.
  int64_t moveAlong(int64_t rank, const std::vector<int64_t> &axes,
                    const std::vector<int64_t> &coords) const;
  /// The ranks of `rank`'s group over `axes`: those that differ from it on
  /// `axes` only, ordered by their coordinates on `axes` in the order
  /// given (row-major).
  std::vector<int64_t> group(int64_t rank,
                             const std::vector<int64_t> &axes) const;
  /// The index of `rank`'s group over `axes` among all such groups (equal
  /// for the members of one group).
  int64_t groupIndex(int64_t rank, const std::vector<int64_t> &axes) const;

private:
  std::vector<int64_t> dims;
  int64_t count = 1;
};

/// How a tensor is cut over a grid: per dimension the grid axis it is split
/// over (-1: whole) and the groups it is made of (each device holds its
/// block of every group; 1 by default).
struct Split {
  std::vector<int64_t> axes;
  std::vector<int64_t> groups;

  bool isWhole() const;
};

/// The global shape of a tensor whose block is `local`.
std::vector<int64_t> globalShape(const std::vector<int64_t> &local,
                                 const Split &split, const Grid &grid);

/// Per dimension, the global index of each index of the block at grid
/// coordinates `coords`.
std::vector<std::vector<int64_t>>
blockIndices(const std::vector<int64_t> &local, const Split &split,
             const Grid &grid, const std::vector<int64_t> &coords);

/// For each element of the block at grid coordinates `coords` (row-major
/// over `local`), its element offset in the global tensor.
std::vector<int64_t> blockOffsets(const std::vector<int64_t> &local,
                                  const Split &split, const Grid &grid,
                                  const std::vector<int64_t> &coords);

} // namespace ober::rt

#endif // OBER_RUNTIME_GRID_H
