/*===- Collectives.h - collectives' C ABI for generated code ------*- C -*-===*\
|*                                                                            *|
|* Part of Ober-Train's runtime (no MLIR). A partitioned program's            *|
|* collectives and pipeline transfers (`shard.all_reduce`, `all_gather`,      *|
|* `reduce_scatter`, `all_to_all`, `broadcast`, `all_slice`, `send`, `recv`)  *|
|* become a start and a wait:                                                 *|
|*                                                                            *|
|*   h = ober_rt_coll_start(desc, in, out)   queued on the rank's channel     *|
|*   ... work that does not need `out` ...                                    *|
|*   ober_rt_coll_wait(h, in, out)           `out` is ready, `in` free again  *|
|*                                                                            *|
|* `desc` is a constant array of int64 whose fields the enum below names;    *|
|* buffers are unranked memrefs (CPUKernels.h), dense and row-major. Each     *|
|* rank's channel runs its collectives in the order they were started, on    *|
|* its own thread, so communication overlaps the computation between start   *|
|* and wait.                                                                  *|
|*                                                                            *|
|* convert-shard-to-runtime includes this header for the names and field     *|
|* positions, so the compiler and the runtime cannot disagree.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OBER_RUNTIME_COLLECTIVES_H
#define OBER_RUNTIME_COLLECTIVES_H

#include "ober/Runtime/CPUKernels.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Generated code calls start and wait by element type: the names below
   followed by `_` and the type's NumPy name (ober::rt::dtypeName), e.g.
   `ober_rt_coll_start_float32`; the runtime defines one pair per type of
   this list. */
#define OBER_RT_COLL_START "ober_rt_coll_start"
#define OBER_RT_COLL_WAIT "ober_rt_coll_wait"
#define OBER_RT_COLL_TYPES(X)                                                  \
  X(float16) X(bfloat16) X(float32) X(float64) X(bool) X(int8) X(uint8)        \
      X(int16) X(int32) X(int64)

/// What a collective does. Groups are the ranks that differ only on the
/// descriptor's grid axes (ober/Runtime/Grid.h), ordered by their
/// coordinates there.
enum ober_rt_coll_kind {
  OBER_COLL_ALL_REDUCE,     /* out = reduction of every member's in */
  OBER_COLL_ALL_GATHER,     /* out = members' in concatenated along AXIS */
  OBER_COLL_REDUCE_SCATTER, /* out = this member's block (AXIS) of the sum */
  OBER_COLL_ALL_TO_ALL,     /* blocks along AXIS exchanged, out concatenated
                               along CONCAT_AXIS */
  OBER_COLL_BROADCAST,      /* out = in of the member at PEER coordinates */
  OBER_COLL_ALL_SLICE,      /* out = this member's block (AXIS) of in */
  OBER_COLL_SEND,           /* in goes to the rank at PEER coordinates */
  OBER_COLL_RECV,           /* out comes from the rank at PEER coordinates */
  OBER_COLL_KINDS
};

/// Reductions (shard's `ReductionKind` subset the runtime runs).
enum ober_rt_coll_reduction {
  OBER_REDUCE_SUM,
  OBER_REDUCE_MAX,
  OBER_REDUCE_MIN,
  OBER_REDUCE_PRODUCT,
};

/// Descriptor fields. After the fixed ones: the input's RANK sizes, then
/// NUM_AXES grid axes, then NUM_AXES coordinates (PEER; zeros when unused).
enum ober_rt_coll_field {
  OBER_COLL_KIND,
  OBER_COLL_DTYPE,       /* ober::rt::DType */
  OBER_COLL_REDUCTION,   /* ober_rt_coll_reduction */
  OBER_COLL_AXIS,        /* gather, scatter, split or slice axis */
  OBER_COLL_CONCAT_AXIS, /* all-to-all's */
  OBER_COLL_TAG,         /* send/recv: matches a send with its recv */
  OBER_COLL_GROUP,       /* index of the grid axes in the program's groups */
  OBER_COLL_RANK,
  OBER_COLL_NUM_AXES,
  OBER_COLL_FIXED_FIELDS
};

/// Starts the collective `desc` on `in` into `out` (recv ignores `in`;
/// send writes nothing) and returns its handle.
/// Waits for the collective `handle`; `in` and `out` are its buffers.
#define OBER_RT_COLL_DECLARE(T)                                                \
  int64_t _mlir_ciface_ober_rt_coll_start_##T(                                 \
      ober_rt_buffer *desc, ober_rt_buffer *in, ober_rt_buffer *out);         \
  void _mlir_ciface_ober_rt_coll_wait_##T(int64_t handle, ober_rt_buffer *in, \
                                          ober_rt_buffer *out);
OBER_RT_COLL_TYPES(OBER_RT_COLL_DECLARE)
#undef OBER_RT_COLL_DECLARE

#ifdef __cplusplus
}
#endif

#endif /* OBER_RUNTIME_COLLECTIVES_H */
