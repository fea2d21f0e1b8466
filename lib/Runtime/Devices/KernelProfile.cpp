//===- KernelProfile.cpp - GPU time of each launch and library call -------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/KernelProfile.h"
#include "ober/Runtime/Devices/Modules.h"

#include <memory>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {
/// Spans read back at once: their events then go back to the pool.
constexpr size_t kPendingSpans = 4096;

thread_local std::unique_ptr<KernelProfile> profile;

} // namespace

KernelProfile *KernelProfile::current() { return profile.get(); }

void KernelProfile::enable(bool on) {
  if (!on)
    profile.reset();
  else if (!profile)
    profile = std::make_unique<KernelProfile>();
}

Event KernelProfile::take() {
  if (spare.empty())
    return Event(/*timing=*/true);
  Event e = std::move(spare.back());
  spare.pop_back();
  return e;
}

void KernelProfile::begin(CUstream stream) {
  opened = take();
  opened->record(stream);
}

void KernelProfile::end(const std::string &name, CUstream stream) {
  if (!opened)
    return;
  Event done = take();
  done.record(stream);
  pending.push_back({name, std::move(*opened), std::move(done)});
  opened.reset();
  if (pending.size() >= kPendingSpans)
    collect();
}

void KernelProfile::end(CUfunction function, CUstream stream) {
  std::string name = functionName(function);
  end(name.empty() ? "(unnamed kernel)" : name, stream);
}

void KernelProfile::collect() {
  if (pending.empty())
    return;
  for (Span &s : pending) {
    s.end.synchronize();
    table.add(s.name, s.end.elapsedMsSince(s.start));
    spare.push_back(std::move(s.start));
    spare.push_back(std::move(s.end));
  }
  pending.clear();
}

const KernelTimes &KernelProfile::times() {
  collect();
  return table;
}
