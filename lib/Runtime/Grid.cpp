//===- Grid.cpp - ranks on a device grid and the blocks they hold ---------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Grid.h"

using namespace ober::rt;
using std::size_t;

Grid::Grid(std::vector<int64_t> shape) : dims(std::move(shape)) {
  for (int64_t d : dims)
    count *= d;
}

std::vector<int64_t> Grid::coordinates(int64_t rank) const {
  std::vector<int64_t> coords(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    coords[i] = rank % dims[i];
    rank /= dims[i];
  }
  return coords;
}

int64_t Grid::rankAt(const std::vector<int64_t> &coords) const {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    linear = linear * dims[i] + coords[i];
  return linear;
}

int64_t Grid::moveAlong(int64_t rank, const std::vector<int64_t> &axes,
                        const std::vector<int64_t> &coords) const {
  std::vector<int64_t> c = coordinates(rank);
  for (size_t i = 0; i < axes.size() && i < coords.size(); ++i)
    c[axes[i]] = coords[i];
  return rankAt(c);
}

std::vector<int64_t> Grid::group(int64_t rank,
                                 const std::vector<int64_t> &axes) const {
  std::vector<int64_t> coords = coordinates(rank);
  int64_t members = 1;
  for (int64_t a : axes)
    members *= dims[a];
  std::vector<int64_t> out;
  out.reserve(members);
  for (int64_t k = 0; k < members; ++k) {
    std::vector<int64_t> c = coords;
    int64_t rem = k;
    for (size_t i = axes.size(); i-- > 0;) {
      c[axes[i]] = rem % dims[axes[i]];
      rem /= dims[axes[i]];
    }
    out.push_back(rankAt(c));
  }
  return out;
}

int64_t Grid::groupIndex(int64_t rank, const std::vector<int64_t> &axes) const {
  std::vector<int64_t> coords = coordinates(rank);
  int64_t index = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    bool inGroup = false;
    for (int64_t a : axes)
      inGroup |= a == static_cast<int64_t>(i);
    if (!inGroup)
      index = index * dims[i] + coords[i];
  }
  return index;
}

bool Split::isWhole() const {
  for (int64_t a : axes)
    if (a >= 0)
      return false;
  return true;
}

static int64_t groupsAt(const Split &split, size_t d) {
  return d < split.groups.size() && split.groups[d] > 0 ? split.groups[d] : 1;
}

std::vector<int64_t> ober::rt::globalShape(const std::vector<int64_t> &local,
                                           const Split &split,
                                           const Grid &grid) {
  std::vector<int64_t> shape = local;
  for (size_t d = 0; d < shape.size() && d < split.axes.size(); ++d)
    if (split.axes[d] >= 0)
      shape[d] *= grid.shape()[split.axes[d]];
  return shape;
}

std::vector<std::vector<int64_t>>
ober::rt::blockIndices(const std::vector<int64_t> &local, const Split &split,
                       const Grid &grid, const std::vector<int64_t> &coords) {
  size_t rank = local.size();
  std::vector<std::vector<int64_t>> index(rank);
  for (size_t d = 0; d < rank; ++d) {
    index[d].resize(local[d]);
    int64_t axis = d < split.axes.size() ? split.axes[d] : -1;
    int64_t groups = groupsAt(split, d);
    int64_t block = axis >= 0 ? local[d] / groups : local[d];
    for (int64_t c = 0; c < local[d]; ++c)
      index[d][c] = axis < 0 ? c
                             : (c / block) * block * grid.shape()[axis] +
                                   coords[axis] * block + c % block;
  }
  return index;
}

std::vector<int64_t> ober::rt::blockOffsets(const std::vector<int64_t> &local,
                                            const Split &split,
                                            const Grid &grid,
                                            const std::vector<int64_t> &coords) {
  std::vector<int64_t> global = globalShape(local, split, grid);
  size_t rank = local.size();
  std::vector<std::vector<int64_t>> index =
      blockIndices(local, split, grid, coords);
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;)
    strides[d - 1] = strides[d] * global[d];
  int64_t n = 1;
  for (int64_t s : local)
    n *= s;
  std::vector<int64_t> offsets(n);
  std::vector<int64_t> at(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += index[d][at[d]] * strides[d];
    offsets[i] = offset;
    for (size_t d = rank; d-- > 0;) {
      if (++at[d] < local[d])
        break;
      at[d] = 0;
    }
  }
  return offsets;
}
