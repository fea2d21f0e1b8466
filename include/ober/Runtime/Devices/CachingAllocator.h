//===- CachingAllocator.h - device memory reused, not returned --*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). cuMemAlloc and cuMemFree are slow
// and synchronize the device, and a training step allocates and frees the
// same sizes every iteration, so freed blocks stay cached and are handed
// out again, in the spirit of PyTorch's CUDACachingAllocator:
//
//  - sizes are rounded up: to 512 bytes up to 1 MiB ("small" blocks, carved
//    from 2 MiB segments), to 2 MiB above (one segment per request, or a
//    larger cached block split when the remainder is over 1 MiB);
//  - free blocks are kept by size per (stream, small or large) pool and the
//    smallest that fits is reused; neighbours freed in the same segment
//    merge again;
//  - a block belongs to the stream it was allocated on: work later queued
//    on that stream runs after whatever used the block before, so it can be
//    reused at once. A block also used on other streams (recordStream) is
//    kept back, once freed, until markers recorded on those streams pass;
//  - when the device is out of memory, every cached segment nobody uses
//    goes back to the driver and the request is tried once more before an
//    OutOfMemoryError naming the request, the bytes in use and cached and
//    the device's total.
//
// The device is reached through a MemoryBackend, so the logic is tested
// with a fake one and no GPU; deviceAllocator() gives the CUDA one.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_CACHINGALLOCATOR_H
#define OBER_RUNTIME_DEVICES_CACHINGALLOCATOR_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace ober::rt::cuda {

/// A stream as the allocator knows it (a CUstream; null: the default one).
using StreamKey = const void *;

/// The device memory the allocator carves blocks from.
class MemoryBackend {
public:
  virtual ~MemoryBackend();
  /// `bytes` of device memory, or null when the device has no more (any
  /// other failure throws).
  virtual void *allocate(size_t bytes) = 0;
  virtual void release(void *memory) = 0;
  /// Waits until the device has finished all queued work, before cached
  /// memory goes back to the driver.
  virtual void synchronize() = 0;
  /// A marker recorded now on `stream`: passed once the stream's work
  /// queued so far has finished.
  virtual void *recordMarker(StreamKey stream) = 0;
  virtual bool markerPassed(void *marker) = 0;
  virtual void destroyMarker(void *marker) = 0;
  /// The device's memory, for messages.
  virtual size_t totalBytes() const = 0;
  /// The device's name, for messages ("device 0 (NVIDIA H200)").
  virtual std::string describe() const = 0;
};

/// The allocator's counters. Bytes are rounded block sizes.
struct AllocatorStats {
  /// Held by callers (allocated and not yet freed).
  size_t inUse = 0;
  size_t peakInUse = 0;
  /// Obtained from the backend and not yet released (in use + cached).
  size_t reserved = 0;
  /// Backend allocations and releases so far.
  size_t driverAllocations = 0;
  size_t driverReleases = 0;
  /// Times the cache was emptied because the device was full.
  size_t cacheFlushes = 0;
  size_t cached() const { return reserved - inUse; }
};

/// The device is out of memory even after the cache was emptied.
struct OutOfMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CachingAllocator {
public:
  /// Requests up to this size are small blocks (rounded to kSmallRounding).
  static constexpr size_t kSmallLimit = size_t(1) << 20;
  static constexpr size_t kSmallRounding = 512;
  /// Small blocks are carved from segments of this size.
  static constexpr size_t kSmallSegment = size_t(2) << 20;
  /// Larger requests are rounded to a multiple of this.
  static constexpr size_t kLargeRounding = size_t(2) << 20;

  explicit CachingAllocator(MemoryBackend &backend);
  /// Releases the segments no caller holds a block of.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  /// A block of at least `bytes` usable by work queued on `stream` (null
  /// for 0 bytes). Throws OutOfMemoryError.
  void *allocate(size_t bytes, StreamKey stream);
  /// Gives back a block from allocate (null: nothing). It can be reused at
  /// once on its allocation stream; after the streams recordStream named
  /// have finished their work queued so far on other streams. Throws
  /// std::invalid_argument for a pointer allocate did not return.
  void free(void *block);
  /// Notes that work on `stream` (other than the block's own) uses
  /// `block`, so that free keeps it until that work is done.
  void recordStream(void *block, StreamKey stream);
  /// Called once `stream` is synchronized and about to be destroyed: its
  /// cached blocks can serve any stream (and a new stream reusing its
  /// handle must not inherit them).
  void retireStream(StreamKey stream);
  /// Releases every cached segment no caller holds a block of (after
  /// synchronizing the device).
  void emptyCache();

  AllocatorStats stats() const;
  /// Restarts peakInUse from the current inUse.
  void resetPeak();
  /// The rounded size of a request of `bytes`.
  static size_t roundSize(size_t bytes);
  /// The rounded size of the block at `block` (0 if not allocated here).
  size_t blockSize(const void *block) const;

private:
  struct Block;
  struct PoolKey {
    StreamKey stream;
    bool small;
    bool operator<(const PoolKey &o) const {
      return stream != o.stream ? stream < o.stream : small < o.small;
    }
  };
  using FreeList = std::multimap<size_t, Block *>;

  Block *takeCached(size_t size, StreamKey stream, bool small);
  Block *takeFrom(PoolKey key, size_t size);
  Block *newSegment(size_t size, StreamKey stream, bool small);
  /// Moves the segment of `inSegment` to `stream`'s pools; `unlisted` is
  /// a free block of it already taken out of its pool.
  void adopt(Block *inSegment, StreamKey stream, const Block *unlisted);
  void split(Block *block, size_t size);
  void insertFree(Block *block);
  void eraseFree(Block *block);
  void makeFree(Block *block);
  void processMarkers(bool wait);
  void releaseUnusedSegments();
  std::string outOfMemoryMessage(size_t bytes) const;

  MemoryBackend &backend;
  mutable std::mutex mutex;
  std::map<PoolKey, FreeList> pools;
  std::unordered_map<const void *, Block *> allocated;
  /// Freed blocks waiting for their streams' markers.
  std::vector<std::pair<void *, Block *>> pending;
  /// First blocks of every segment.
  std::vector<Block *> segments;
  AllocatorStats counters;
};

/// The caching allocator of CUDA device `ordinal` (cuMemAlloc_v2 and
/// cuMemFree_v2 in its primary context), created on first use and kept
/// for the life of the process. Throws CudaError without a device.
CachingAllocator &deviceAllocator(int ordinal);

} // namespace ober::rt::cuda

#endif // OBER_RUNTIME_DEVICES_CACHINGALLOCATOR_H
