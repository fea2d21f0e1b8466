//===- DeviceMirrorTest.cpp - state kept in device memory between steps ---===//
//
// Part of Ober-Train. DeviceMirror's rules with host memory standing in for
// a GPU: a tensor is uploaded once and found again by its host bytes, the
// host's copy is stale after a step wrote the mirror and whole again after
// syncToHost (one wait for all), a mirror no host tensor holds is dropped,
// a block the program returned is taken over with its offset, and a view
// overlapping a stale mirror gets the device's bytes, not the host's.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Executable/DeviceMirror.h"

#include "../TestSupport.h"

#include <cstring>
#include <set>

using namespace ober::rt;

namespace {

/// Host memory as the device, counting what the mirror asks of it.
struct FakeDevice final : DeviceMirror::Device {
  std::set<void *> live;
  int uploads = 0, downloads = 0, waits = 0, frees = 0;
  void *allocate(size_t bytes) override {
    void *b = new char[bytes];
    live.insert(b);
    return b;
  }
  void free(void *block) override {
    EXPECT(live.erase(block) == 1);
    delete[] static_cast<char *>(block);
    ++frees;
  }
  void toDevice(void *device, const void *host, size_t bytes) override {
    EXPECT(owns(device, bytes));
    std::memcpy(device, host, bytes);
    ++uploads;
  }
  void toHost(void *host, const void *device, size_t bytes) override {
    EXPECT(owns(device, bytes));
    std::memcpy(host, device, bytes);
    ++downloads;
  }
  void finish() override { ++waits; }
  /// Whether [p, p + bytes) lies in a live block (sizes are not kept:
  /// a start inside one is enough for these tests).
  bool owns(const void *p, size_t) const {
    for (void *b : live)
      if (p >= b && static_cast<const char *>(p) <
                        static_cast<const char *>(b) + (1 << 16))
        return true;
    return false;
  }
};

HostTensor filled(std::vector<int64_t> shape, float first) {
  HostTensor t(DType::F32, std::move(shape));
  for (int64_t i = 0; i < static_cast<int64_t>(t.byteSize() / 4); ++i)
    storeFloat(t, i, first + static_cast<float>(i));
  return t;
}

float at(const char *device, int64_t i) {
  float v;
  std::memcpy(&v, device + 4 * i, 4);
  return v;
}

void testUploadOnceAndSync() {
  FakeDevice device;
  DeviceMirror mirror(device);
  HostTensor w = filled({4}, 1);
  char *d = mirror.place(w);
  EXPECT(d && at(d, 3) == 4);
  EXPECT(mirror.place(w) == d && mirror.find(w) == d);
  EXPECT(device.uploads == 1 && mirror.size() == 1 && mirror.stale() == 0);
  // Another tensor holding the same buffer is the same mirror.
  HostTensor alias = w;
  EXPECT(mirror.find(alias) == d);

  // A step writes the mirror: the host's bytes are stale until synced.
  float two = 2;
  std::memcpy(d, &two, 4);
  mirror.wrote(w);
  EXPECT(mirror.stale() == 1 && loadFloat(w, 0) == 1);
  mirror.syncToHost({w});
  EXPECT(loadFloat(w, 0) == 2 && loadFloat(w, 3) == 4);
  EXPECT(mirror.stale() == 0 && device.downloads == 1 && device.waits == 1);
  // Nothing stale: no copy and no wait.
  mirror.syncToHost({w});
  EXPECT(device.downloads == 1 && device.waits == 1);
}

void testOneWaitForMany() {
  FakeDevice device;
  DeviceMirror mirror(device);
  HostTensor a = filled({2}, 0), b = filled({3}, 0), untouched = filled({1}, 0);
  mirror.place(a);
  mirror.place(b);
  mirror.wrote(a);
  mirror.wrote(b);
  mirror.wrote(untouched); // not mirrored: nothing to do
  mirror.syncToHost({a, b, untouched});
  EXPECT(device.downloads == 2 && device.waits == 1 && mirror.stale() == 0);
}

void testCollect() {
  FakeDevice device;
  DeviceMirror mirror(device);
  HostTensor kept = filled({2}, 0);
  {
    HostTensor replaced = filled({2}, 5);
    mirror.place(replaced);
    mirror.place(kept);
    mirror.wrote(replaced);
  } // the host put another tensor in its place
  EXPECT(mirror.size() == 2);
  mirror.collect();
  EXPECT(mirror.size() == 1 && mirror.find(kept) && device.frees == 1);
  EXPECT(device.downloads == 0); // nobody reads what was dropped
}

void testAdopt() {
  FakeDevice device;
  DeviceMirror mirror(device);
  HostTensor fresh(DType::F32, {2});
  auto *block = static_cast<char *>(device.allocate(64));
  float values[2] = {7, 8};
  std::memcpy(block + 16, values, 8);
  mirror.adopt(fresh, block, block + 16);
  EXPECT(mirror.find(fresh) == block + 16 && mirror.stale() == 1);
  mirror.syncToHost({fresh});
  EXPECT(loadFloat(fresh, 0) == 7 && loadFloat(fresh, 1) == 8);
  EXPECT(device.uploads == 0);
}

void testOverlappingView() {
  FakeDevice device;
  DeviceMirror mirror(device);
  HostTensor whole = filled({4}, 0);
  char *d = mirror.place(whole);
  float nine = 9;
  std::memcpy(d + 8, &nine, 4);
  mirror.wrote(whole);
  // A view of the last two elements: its mirror starts from the device's
  // bytes, and the whole tensor's stale mirror is gone.
  HostTensor tail = HostTensor::share(whole, DType::F32, {2}, whole.data() + 8);
  char *v = mirror.place(tail);
  EXPECT(at(v, 0) == 9 && at(v, 1) == 3);
  EXPECT(loadFloat(whole, 2) == 9 && mirror.size() == 1 && !mirror.find(whole));
}

void testOverlapsAnother() {
  FakeDevice device;
  DeviceMirror mirror(device);
  HostTensor whole = filled({4}, 0), apart = filled({4}, 0);
  mirror.place(whole);
  HostTensor tail = HostTensor::share(whole, DType::F32, {2}, whole.data() + 8);
  // A view of mirrored bytes (what invokeOnCopies refuses as an argument),
  // not the mirrored tensor itself nor other memory.
  EXPECT(mirror.overlapsAnother(tail));
  EXPECT(!mirror.overlapsAnother(whole) && !mirror.overlapsAnother(apart));
}

void testBlocksGoBack() {
  FakeDevice device;
  {
    DeviceMirror mirror(device);
    HostTensor a = filled({2}, 0), b = filled({8}, 0);
    mirror.place(a);
    mirror.place(b);
  }
  EXPECT(device.live.empty() && device.frees == 2);
}

} // namespace

int main() {
  testUploadOnceAndSync();
  testOneWaitForMany();
  testCollect();
  testAdopt();
  testOverlappingView();
  testOverlapsAnother();
  testBlocksGoBack();
  return testSummary();
}
