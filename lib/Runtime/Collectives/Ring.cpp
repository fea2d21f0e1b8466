//===- Ring.cpp - collectives as rings of point-to-point exchanges --------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Ring.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace ober::rt;

namespace {
int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

/// `count` elements split into `parts` blocks whose sizes differ by at
/// most one, each sent in pieces of at most `chunk` elements: as many
/// pieces for every block (the longest's), so that every member makes as
/// many exchanges; a shorter block's last may be empty.
struct Blocks {
  int64_t count, parts, chunk;
  int64_t start(int64_t b) const { return count * b / parts; }
  int64_t length(int64_t b) const { return start(b + 1) - start(b); }
  int64_t longest() const { return (count + parts - 1) / parts; }
  int64_t pieces() const { return (longest() + chunk - 1) / chunk; }
  /// Piece j of block b: its first element and length (0 past the end).
  std::pair<int64_t, int64_t> piece(int64_t b, int64_t j) const {
    int64_t offset = j * chunk;
    return {start(b) + offset,
            std::clamp<int64_t>(length(b) - offset, 0, chunk)};
  }
};

int64_t chunkElements(const Ring &ring, size_t elementBytes) {
  return std::max<int64_t>(1, ring.chunkBytes /
                                  static_cast<int64_t>(elementBytes));
}
} // namespace

void ober::rt::ringAllReduce(const Ring &ring, void *data, int64_t count,
                             DType type, int reduction) {
  int64_t p = ring.members, r = ring.index;
  if (p <= 1 || count == 0)
    return;
  size_t es = dtypeSize(type);
  auto *bytes = static_cast<char *>(data);
  Blocks blocks{count, p, chunkElements(ring, es)};
  std::vector<char> scratch(std::min(blocks.chunk, blocks.longest()) * es);
  // Reduce-scatter: at step k a member sends its partial sum of block
  // r - k and adds the previous member's of block r - k - 1 to its own;
  // after p - 1 steps it holds block r + 1 reduced over every member.
  for (int64_t k = 0; k + 1 < p; ++k) {
    int64_t sent = wrap(r - k, p), got = wrap(r - k - 1, p);
    for (int64_t j = 0; j < blocks.pieces(); ++j) {
      auto [so, sl] = blocks.piece(sent, j);
      auto [ro, rl] = blocks.piece(got, j);
      ring.exchange(bytes + so * es, sl * es, scratch.data(), rl * es);
      reduceInto(type, reduction, bytes + ro * es, scratch.data(), rl);
    }
  }
  // All-gather: the reduced blocks go round the ring.
  for (int64_t k = 0; k + 1 < p; ++k) {
    int64_t sent = wrap(r + 1 - k, p), got = wrap(r - k, p);
    for (int64_t j = 0; j < blocks.pieces(); ++j) {
      auto [so, sl] = blocks.piece(sent, j);
      auto [ro, rl] = blocks.piece(got, j);
      ring.exchange(bytes + so * es, sl * es, bytes + ro * es, rl * es);
    }
  }
}

void ober::rt::ringReduceScatter(const Ring &ring, const void *in, void *out,
                                 int64_t count, DType type, int reduction) {
  int64_t p = ring.members, r = ring.index;
  size_t es = dtypeSize(type);
  const auto *input = static_cast<const char *>(in);
  auto *output = static_cast<char *>(out);
  if (count == 0)
    return;
  if (p <= 1) {
    std::memcpy(out, input, count * es);
    return;
  }
  int64_t chunk = std::min(chunkElements(ring, es), count);
  std::vector<char> scratch(2 * chunk * es);
  char *buffers[2] = {scratch.data(), scratch.data() + chunk * es};
  // Piece by piece, a partial sum of block b starts at member b + 1 and
  // gathers every member's share on its way to member b.
  for (int64_t offset = 0; offset < count; offset += chunk) {
    int64_t length = std::min(chunk, count - offset);
    const char *send = input + (wrap(r - 1, p) * count + offset) * es;
    for (int64_t k = 0; k + 1 < p; ++k) {
      int64_t block = wrap(r - 2 - k, p);
      char *recv = k + 2 == p ? output + offset * es : buffers[k % 2];
      ring.exchange(send, length * es, recv, length * es);
      reduceInto(type, reduction, recv,
                 input + (block * count + offset) * es, length);
      send = recv;
    }
  }
}
