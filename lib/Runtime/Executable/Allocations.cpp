//===- Allocations.cpp - bytes the executable holds, counted --------------===//
//
// Part of Ober-Train. Executables replace the C allocator's entry points
// with ones that count the bytes live (glibc's own allocator does the
// work), so a run can report the peak of what training allocates -- the
// figure the planner's memory model predicts, as a GPU framework's
// "max allocated" -- rather than the resident set, which also holds the
// allocator's free lists. Sanitizer builds keep their own allocator and
// report nothing counted.
//
//===----------------------------------------------------------------------===//

#include "Allocations.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define OBER_KEEP_ALLOCATOR 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OBER_KEEP_ALLOCATOR 1
#endif

namespace {
std::atomic<int64_t> live{0}, peak{0};

void add(void *p) {
  if (!p)
    return;
  int64_t now = live.fetch_add(static_cast<int64_t>(malloc_usable_size(p)),
                               std::memory_order_relaxed) +
                static_cast<int64_t>(malloc_usable_size(p));
  int64_t high = peak.load(std::memory_order_relaxed);
  while (now > high &&
         !peak.compare_exchange_weak(high, now, std::memory_order_relaxed))
    ;
}

void remove(void *p) {
  if (p)
    live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)),
                   std::memory_order_relaxed);
}
} // namespace

#ifndef OBER_KEEP_ALLOCATOR
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);
void __libc_free(void *);

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  add(p);
  return p;
}
void *calloc(size_t n, size_t size) {
  void *p = __libc_calloc(n, size);
  add(p);
  return p;
}
void *realloc(void *old, size_t n) {
  remove(old);
  void *p = __libc_realloc(old, n);
  add(p ? p : (n ? old : nullptr)); // a failed realloc keeps the old block
  return p;
}
void free(void *p) {
  remove(p);
  __libc_free(p);
}
void *memalign(size_t alignment, size_t n) {
  void *p = __libc_memalign(alignment, n);
  add(p);
  return p;
}
void *aligned_alloc(size_t alignment, size_t n) {
  return memalign(alignment, n);
}
void *valloc(size_t n) {
  void *p = __libc_valloc(n);
  add(p);
  return p;
}
void *pvalloc(size_t n) {
  void *p = __libc_pvalloc(n);
  add(p);
  return p;
}
int posix_memalign(void **out, size_t alignment, size_t n) {
  if (alignment == 0 || alignment % sizeof(void *) ||
      (alignment & (alignment - 1)))
    return 22; // EINVAL
  void *p = memalign(alignment, n);
  if (!p && n)
    return 12; // ENOMEM
  *out = p;
  return 0;
}
}
#endif

bool ober::rt::allocationsCounted() {
#ifdef OBER_KEEP_ALLOCATOR
  return false;
#else
  return true;
#endif
}

int64_t ober::rt::liveBytes() { return live.load(std::memory_order_relaxed); }

int64_t ober::rt::peakLiveBytes() {
  return peak.load(std::memory_order_relaxed);
}

void ober::rt::resetPeakLiveBytes() {
  peak.store(live.load(std::memory_order_relaxed), std::memory_order_relaxed);
}
