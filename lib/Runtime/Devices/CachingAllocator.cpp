//===- CachingAllocator.cpp - device memory reused, not returned ----------===//
//
// Part of Ober-Train's runtime (no MLIR). The bookkeeping behind
// CachingAllocator.h; it never calls CUDA itself, only its MemoryBackend.
//
// A segment is one backend allocation, cut into a chain of blocks (prev,
// next) that split on allocation and merge again when neighbours are free.
// Every block of a segment belongs to the segment's stream, so merging
// never mixes pools. Free blocks sit in their pool's size-ordered multimap
// and remember their position in it.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CachingAllocator.h"

#include <algorithm>
#include <cstdio>

using namespace ober::rt::cuda;

namespace {
/// The pool key of segments whose stream has been retired: their blocks
/// are idle and go to whichever stream asks first.
const char kIdleMarker = 0;
const StreamKey kIdleStream = &kIdleMarker;

std::string bytesText(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof(text), "%zu bytes (%.2f GiB)", bytes,
                static_cast<double>(bytes) / (1 << 30));
  return text;
}

std::string pointerText(const void *p) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", p);
  return text;
}
} // namespace

struct CachingAllocator::Block {
  enum State { Free, Allocated, Pending };
  Block(char *ptr, size_t size, StreamKey stream, bool small)
      : ptr(ptr), size(size), stream(stream), small(small) {}
  char *ptr;
  size_t size;
  StreamKey stream;
  bool small;
  State state = Free;
  Block *prev = nullptr, *next = nullptr;
  /// The block's entry in its pool (while Free).
  FreeList::iterator where;
  /// Streams other than its own that used it (recordStream).
  std::vector<StreamKey> uses;
  /// Markers still to pass before a Pending block is free.
  int markers = 0;
};

MemoryBackend::~MemoryBackend() = default;

CachingAllocator::CachingAllocator(MemoryBackend &backend) : backend(backend) {}

CachingAllocator::~CachingAllocator() {
  try {
    emptyCache();
  } catch (...) {
    // The device is gone or failing; what is left goes with the context.
  }
  for (Block *head : segments)
    for (Block *b = head; b;) {
      Block *next = b->next;
      delete b;
      b = next;
    }
}

size_t CachingAllocator::roundSize(size_t bytes) {
  auto roundUp = [](size_t n, size_t to) { return (n + to - 1) / to * to; };
  size_t small = roundUp(std::max<size_t>(bytes, 1), kSmallRounding);
  return small <= kSmallLimit ? small : roundUp(bytes, kLargeRounding);
}

void *CachingAllocator::allocate(size_t bytes, StreamKey stream) {
  if (bytes == 0)
    return nullptr;
  size_t size = roundSize(bytes);
  bool small = size <= kSmallLimit;
  size_t segmentSize = small ? kSmallSegment : size;
  std::lock_guard<std::mutex> lock(mutex);
  processMarkers(/*wait=*/false);
  Block *block = takeCached(size, stream, small);
  if (!block)
    block = newSegment(segmentSize, stream, small);
  if (!block) {
    // Full: give every unused cached segment back, then try once more.
    ++counters.cacheFlushes;
    backend.synchronize();
    processMarkers(/*wait=*/true);
    releaseUnusedSegments();
    block = takeCached(size, stream, small);
    if (!block)
      block = newSegment(segmentSize, stream, small);
    if (!block)
      throw OutOfMemoryError(outOfMemoryMessage(bytes));
  }
  split(block, size);
  block->state = Block::Allocated;
  allocated[block->ptr] = block;
  counters.inUse += block->size;
  counters.peakInUse = std::max(counters.peakInUse, counters.inUse);
  return block->ptr;
}

void CachingAllocator::free(void *memory) {
  if (!memory)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocated.find(memory);
  if (it == allocated.end())
    throw std::invalid_argument(
        "CachingAllocator::free: " + pointerText(memory) +
        " is not a block of this allocator (or was freed already)");
  Block *block = it->second;
  // Markers first: if recording one throws, the block stays allocated.
  std::vector<void *> markers;
  for (StreamKey use : block->uses)
    markers.push_back(backend.recordMarker(use));
  allocated.erase(it);
  counters.inUse -= block->size;
  if (markers.empty()) {
    makeFree(block);
    return;
  }
  block->state = Block::Pending;
  block->markers = static_cast<int>(markers.size());
  for (void *marker : markers)
    pending.emplace_back(marker, block);
}

void CachingAllocator::recordStream(void *memory, StreamKey stream) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocated.find(memory);
  if (it == allocated.end())
    throw std::invalid_argument(
        "CachingAllocator::recordStream: " + pointerText(memory) +
        " is not an allocated block of this allocator");
  Block *block = it->second;
  if (stream != block->stream &&
      std::find(block->uses.begin(), block->uses.end(), stream) ==
          block->uses.end())
    block->uses.push_back(stream);
}

void CachingAllocator::retireStream(StreamKey stream) {
  if (!stream || stream == kIdleStream)
    return; // the default stream lives as long as the context
  std::lock_guard<std::mutex> lock(mutex);
  for (Block *head : segments)
    if (head->stream == stream)
      adopt(head, kIdleStream, /*unlisted=*/nullptr);
}

void CachingAllocator::emptyCache() {
  std::lock_guard<std::mutex> lock(mutex);
  backend.synchronize();
  processMarkers(/*wait=*/true);
  releaseUnusedSegments();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counters;
}

void CachingAllocator::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex);
  counters.peakInUse = counters.inUse;
}

size_t CachingAllocator::blockSize(const void *memory) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocated.find(memory);
  return it == allocated.end() ? 0 : it->second->size;
}

//===----------------------------------------------------------------------===//
// Pools and segments (called with the mutex held)
//===----------------------------------------------------------------------===//

CachingAllocator::Block *
CachingAllocator::takeCached(size_t size, StreamKey stream, bool small) {
  if (Block *block = takeFrom({stream, small}, size))
    return block;
  Block *idle = takeFrom({kIdleStream, small}, size);
  if (idle)
    adopt(idle, stream, /*unlisted=*/idle);
  return idle;
}

CachingAllocator::Block *CachingAllocator::takeFrom(PoolKey key, size_t size) {
  auto pool = pools.find(key);
  if (pool == pools.end())
    return nullptr;
  auto fit = pool->second.lower_bound(size); // the smallest that fits
  if (fit == pool->second.end())
    return nullptr;
  Block *block = fit->second;
  eraseFree(block);
  return block;
}

CachingAllocator::Block *
CachingAllocator::newSegment(size_t size, StreamKey stream, bool small) {
  void *memory = backend.allocate(size);
  if (!memory)
    return nullptr;
  ++counters.driverAllocations;
  counters.reserved += size;
  auto *block = new Block(static_cast<char *>(memory), size, stream, small);
  segments.push_back(block);
  return block;
}

void CachingAllocator::adopt(Block *inSegment, StreamKey stream,
                             const Block *unlisted) {
  Block *head = inSegment;
  while (head->prev)
    head = head->prev;
  for (Block *b = head; b; b = b->next) {
    bool listed = b->state == Block::Free && b != unlisted;
    if (listed)
      eraseFree(b);
    b->stream = stream;
    if (listed)
      insertFree(b);
  }
}

void CachingAllocator::split(Block *block, size_t size) {
  size_t rest = block->size - size;
  // A small remainder is still a usable small block; a large one must be
  // worth a separate large block (over the small limit).
  size_t minimum = block->small ? kSmallRounding : kSmallLimit + 1;
  if (rest < minimum)
    return;
  auto *tail = new Block(block->ptr + size, rest, block->stream, block->small);
  tail->prev = block;
  tail->next = block->next;
  if (block->next)
    block->next->prev = tail;
  block->next = tail;
  block->size = size;
  insertFree(tail);
}

void CachingAllocator::insertFree(Block *block) {
  block->state = Block::Free;
  block->where =
      pools[{block->stream, block->small}].emplace(block->size, block);
}

void CachingAllocator::eraseFree(Block *block) {
  pools[{block->stream, block->small}].erase(block->where);
}

void CachingAllocator::makeFree(Block *block) {
  block->uses.clear();
  block->markers = 0;
  if (Block *prev = block->prev; prev && prev->state == Block::Free) {
    eraseFree(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next)
      block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block *next = block->next; next && next->state == Block::Free) {
    eraseFree(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next)
      next->next->prev = block;
    delete next;
  }
  insertFree(block);
}

void CachingAllocator::processMarkers(bool wait) {
  for (size_t i = 0; i < pending.size();) {
    auto [marker, block] = pending[i];
    if (!wait && !backend.markerPassed(marker)) {
      ++i;
      continue;
    }
    backend.destroyMarker(marker);
    pending[i] = pending.back();
    pending.pop_back();
    if (--block->markers == 0)
      makeFree(block);
  }
}

void CachingAllocator::releaseUnusedSegments() {
  std::vector<Block *> kept;
  for (Block *head : segments) {
    if (head->state != Block::Free || head->next) {
      kept.push_back(head);
      continue;
    }
    eraseFree(head);
    backend.release(head->ptr);
    counters.reserved -= head->size;
    ++counters.driverReleases;
    delete head;
  }
  segments = std::move(kept);
}

std::string CachingAllocator::outOfMemoryMessage(size_t bytes) const {
  return "out of device memory on " + backend.describe() +
         ": cannot allocate " + bytesText(bytes) + " (rounded to " +
         bytesText(roundSize(bytes)) + "); " + bytesText(counters.inUse) +
         " in use, " + bytesText(counters.cached()) +
         " cached by the allocator (after releasing every unused segment), " +
         bytesText(backend.totalBytes()) + " total on the device";
}
