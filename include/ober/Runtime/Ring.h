//===- Ring.h - collectives as rings of point-to-point exchanges -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). All-reduce and reduce-scatter as
// rings (each member sends to the next and receives from the previous,
// members - 1 times per phase), the bandwidth-optimal algorithm NCCL and
// Gloo use for large messages. Each exchange moves at most `chunkBytes`,
// so the scratch memory is one or two chunks whatever the message size:
// MPI libraries' own algorithms allocate one or two copies of the whole
// message (Open MPI's reduce-scatter two), which a gradient reduction
// would add to the step's peak memory.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_RING_H
#define OBER_RUNTIME_RING_H

#include "ober/Runtime/Comm.h"

#include <functional>

namespace ober::rt {

/// Sends `sendBytes` of `send` to the ring's next member while receiving
/// `recvBytes` from the previous into `recv` (the buffers never overlap;
/// either size may be 0).
using RingExchange = std::function<void(const void *send, int64_t sendBytes,
                                        void *recv, int64_t recvBytes)>;

/// One member's place in a ring.
struct Ring {
  RingExchange exchange;
  int64_t index, members;
  int64_t chunkBytes;
};

/// data = the reduction over the members of data (`count` elements).
void ringAllReduce(const Ring &ring, void *data, int64_t count, DType type,
                   int reduction);

/// out = this member's block (`count` elements) of the reduction of the
/// members' `in` (one block per member, in order).
void ringReduceScatter(const Ring &ring, const void *in, void *out,
                       int64_t count, DType type, int reduction);

} // namespace ober::rt

#endif // OBER_RUNTIME_RING_H
