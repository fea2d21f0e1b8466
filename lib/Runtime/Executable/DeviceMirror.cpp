//===- DeviceMirror.cpp - tensors kept in a device's memory between steps -===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "DeviceMirror.h"

#include <algorithm>
#include <utility>

using namespace ober::rt;

DeviceMirror::Device::~Device() = default;

DeviceMirror::~DeviceMirror() {
  // At the thread's end: the device may be gone already, and a block it
  // cannot take back is the driver's to reclaim with the context.
  for (Mirror &m : mirrors) {
    try {
      device.free(m.block);
    } catch (...) {
    }
  }
}

namespace {
bool overlaps(const HostTensor &a, const HostTensor &b) {
  return a.data() < b.data() + b.byteSize() &&
         b.data() < a.data() + a.byteSize();
}

/// The same host bytes: how a mirrored tensor is known.
bool sameBytes(const HostTensor &a, const HostTensor &b) {
  return a.data() == b.data() && a.byteSize() == b.byteSize();
}
} // namespace

const DeviceMirror::Mirror *DeviceMirror::lookup(const HostTensor &t) const {
  for (const Mirror &m : mirrors)
    if (sameBytes(m.host, t))
      return &m;
  return nullptr;
}

DeviceMirror::Mirror *DeviceMirror::lookup(const HostTensor &t) {
  return const_cast<Mirror *>(std::as_const(*this).lookup(t));
}

char *DeviceMirror::find(const HostTensor &t) const {
  const Mirror *m = lookup(t);
  return m ? m->data : nullptr;
}

void DeviceMirror::drop(size_t i) {
  device.free(mirrors[i].block);
  mirrors.erase(mirrors.begin() + static_cast<std::ptrdiff_t>(i));
}

char *DeviceMirror::place(const HostTensor &t) {
  if (Mirror *m = lookup(t))
    return m->data;
  // Another view of these bytes is mirrored: the host's copy is made
  // whole first, and only one mirror is kept.
  std::vector<HostTensor> others;
  for (const Mirror &m : mirrors)
    if (overlaps(m.host, t))
      others.push_back(m.host);
  if (!others.empty()) {
    syncToHost(others);
    for (size_t i = mirrors.size(); i-- > 0;)
      if (overlaps(mirrors[i].host, t))
        drop(i);
  }
  size_t bytes = std::max<size_t>(t.byteSize(), 1);
  void *block = device.allocate(bytes);
  device.toDevice(block, t.data(), t.byteSize());
  mirrors.push_back({t, block, static_cast<char *>(block), false});
  return mirrors.back().data;
}

bool DeviceMirror::overlapsAnother(const HostTensor &t) const {
  return std::any_of(mirrors.begin(), mirrors.end(), [&](const Mirror &m) {
    return overlaps(m.host, t) && !sameBytes(m.host, t);
  });
}

void DeviceMirror::wrote(const HostTensor &t) {
  if (Mirror *m = lookup(t))
    m->hostStale = true;
}

void DeviceMirror::adopt(const HostTensor &t, void *block, char *data) {
  mirrors.push_back({t, block, data, true});
}

void DeviceMirror::syncToHost(const std::vector<HostTensor> &tensors) {
  bool queued = false;
  for (const HostTensor &t : tensors) {
    Mirror *m = lookup(t);
    if (!m || !m->hostStale)
      continue;
    device.toHost(m->host.data(), m->data, m->host.byteSize());
    m->hostStale = false;
    queued = true;
  }
  if (queued)
    device.finish();
}

void DeviceMirror::collect() {
  for (size_t i = mirrors.size(); i-- > 0;)
    if (mirrors[i].host.holders() == 1)
      drop(i);
}

size_t DeviceMirror::stale() const {
  return static_cast<size_t>(
      std::count_if(mirrors.begin(), mirrors.end(),
                    [](const Mirror &m) { return m.hostStale; }));
}
