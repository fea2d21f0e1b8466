//===- Descriptor.cpp - collectives as descriptors describe them ----------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Comm.h"

using namespace ober::rt;

namespace {
const char *const kKindNames[] = {"all-reduce", "all-gather", "reduce-scatter",
                                  "all-to-all", "broadcast",  "all-slice",
                                  "send",       "recv"};
static_assert(sizeof(kKindNames) / sizeof(kKindNames[0]) == OBER_COLL_KINDS,
              "a name per kind");

const DType kDTypes[] = {DType::F16,  DType::BF16, DType::F32, DType::F64,
                         DType::Bool, DType::I8,   DType::U8,  DType::I16,
                         DType::I32,  DType::I64};

[[noreturn]] void malformed(const std::string &why) {
  throw CommError("malformed collective descriptor: " + why);
}
} // namespace

const char *CollectiveDesc::kindName() const {
  return kind >= 0 && kind < OBER_COLL_KINDS ? kKindNames[kind] : "collective";
}

CollectiveDesc CollectiveDesc::parse(const int64_t *f, int64_t n) {
  if (n < OBER_COLL_FIXED_FIELDS)
    malformed(std::to_string(n) + " fields");
  CollectiveDesc d;
  d.kind = f[OBER_COLL_KIND];
  if (d.kind < 0 || d.kind >= OBER_COLL_KINDS)
    malformed("kind " + std::to_string(d.kind));
  int64_t type = f[OBER_COLL_DTYPE];
  bool known = false;
  for (DType t : kDTypes)
    known |= static_cast<int64_t>(t) == type;
  if (!known)
    malformed("element type " + std::to_string(type));
  d.dtype = static_cast<DType>(type);
  d.reduction = f[OBER_COLL_REDUCTION];
  if (d.reduction < OBER_REDUCE_SUM || d.reduction > OBER_REDUCE_PRODUCT)
    malformed("reduction " + std::to_string(d.reduction));
  d.axis = f[OBER_COLL_AXIS];
  d.concatAxis = f[OBER_COLL_CONCAT_AXIS];
  d.tag = f[OBER_COLL_TAG];
  d.group = f[OBER_COLL_GROUP];
  int64_t rank = f[OBER_COLL_RANK], axes = f[OBER_COLL_NUM_AXES];
  if (rank < 0 || axes < 0 || n != OBER_COLL_FIXED_FIELDS + rank + 2 * axes)
    malformed(std::to_string(n) + " fields for rank " + std::to_string(rank) +
              " and " + std::to_string(axes) + " grid axes");
  const int64_t *p = f + OBER_COLL_FIXED_FIELDS;
  d.shape.assign(p, p + rank);
  d.gridAxes.assign(p + rank, p + rank + axes);
  d.peer.assign(p + rank + axes, p + rank + 2 * axes);
  for (int64_t s : d.shape)
    if (s < 0)
      malformed("negative size");
  bool axial = d.kind == OBER_COLL_ALL_GATHER ||
               d.kind == OBER_COLL_REDUCE_SCATTER ||
               d.kind == OBER_COLL_ALL_TO_ALL || d.kind == OBER_COLL_ALL_SLICE;
  if (axial && (d.axis < 0 || d.axis >= rank))
    malformed("axis " + std::to_string(d.axis) + " of a rank-" +
              std::to_string(rank) + " tensor");
  if (d.kind == OBER_COLL_ALL_TO_ALL &&
      (d.concatAxis < 0 || d.concatAxis >= rank))
    malformed("concat axis " + std::to_string(d.concatAxis));
  return d;
}

std::vector<int64_t> CollectiveDesc::fields() const {
  std::vector<int64_t> f(OBER_COLL_FIXED_FIELDS);
  f[OBER_COLL_KIND] = kind;
  f[OBER_COLL_DTYPE] = static_cast<int64_t>(dtype);
  f[OBER_COLL_REDUCTION] = reduction;
  f[OBER_COLL_AXIS] = axis;
  f[OBER_COLL_CONCAT_AXIS] = concatAxis;
  f[OBER_COLL_TAG] = tag;
  f[OBER_COLL_GROUP] = group;
  f[OBER_COLL_RANK] = static_cast<int64_t>(shape.size());
  f[OBER_COLL_NUM_AXES] = static_cast<int64_t>(gridAxes.size());
  f.insert(f.end(), shape.begin(), shape.end());
  f.insert(f.end(), gridAxes.begin(), gridAxes.end());
  std::vector<int64_t> coords = peer;
  coords.resize(gridAxes.size(), 0);
  f.insert(f.end(), coords.begin(), coords.end());
  return f;
}

std::vector<int64_t> CollectiveDesc::resultShape(int64_t members) const {
  std::vector<int64_t> out = shape;
  switch (kind) {
  case OBER_COLL_ALL_GATHER:
    out[axis] *= members;
    break;
  case OBER_COLL_REDUCE_SCATTER:
  case OBER_COLL_ALL_SLICE:
    out[axis] /= members;
    break;
  case OBER_COLL_ALL_TO_ALL:
    out[axis] /= members;
    out[concatAxis] *= members;
    break;
  default:
    break;
  }
  return out;
}

Traffic ober::rt::trafficOf(int64_t kind, int64_t inputBytes, int64_t members) {
  switch (kind) {
  case OBER_COLL_ALL_REDUCE:
    return {"all-reduce", inputBytes};
  case OBER_COLL_REDUCE_SCATTER:
    return {"reduce-scatter", inputBytes};
  case OBER_COLL_ALL_GATHER:
    return {"all-gather", inputBytes * members};
  case OBER_COLL_ALL_TO_ALL:
    return {"all-to-all", inputBytes * members};
  case OBER_COLL_BROADCAST:
    return {"broadcast", inputBytes};
  case OBER_COLL_SEND:
    return {"send/recv", inputBytes};
  default:
    return {"", 0};
  }
}
