//===- DeviceMirror.h - tensors kept in a device's memory between steps -*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). On a target whose buffers are
// device memory, the parameters and optimizer state a step writes in place
// stay on the device: the next step finds them there instead of copying
// them over PCIe both ways. The host's tensor keeps its place in the
// executable (checkpoints, data, tracking and the pipeline's transfers
// read it) and its bytes are brought back only when the host is about to
// read them (syncToHost).
//
// Rules:
//  - a mirrored tensor is known by its host bytes (data pointer and size)
//    and holds its host buffer, so no other tensor can be given it;
//  - the host never writes into a tensor a step wrote in place: it puts a
//    new tensor in its place (local SGD's outer step, a pipeline's
//    transfer), and a mirror no host tensor holds any more is dropped at
//    the next step (collect);
//  - the device is reached through a Device, so the rules are tested with
//    host memory standing in for it (unittests/Runtime/DeviceMirrorTest).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_EXECUTABLE_DEVICEMIRROR_H
#define OBER_LIB_RUNTIME_EXECUTABLE_DEVICEMIRROR_H

#include "Buffers.h"

#include <cstddef>
#include <vector>

namespace ober::rt {

class DeviceMirror {
public:
  /// How the mirror reaches the device's memory. Copies are queued in
  /// order with the program's work; finish() waits for all of it.
  class Device {
  public:
    virtual ~Device();
    virtual void *allocate(size_t bytes) = 0;
    virtual void free(void *block) = 0;
    virtual void toDevice(void *device, const void *host, size_t bytes) = 0;
    virtual void toHost(void *host, const void *device, size_t bytes) = 0;
    virtual void finish() = 0;
  };

  explicit DeviceMirror(Device &device) : device(device) {}
  /// Gives the device its blocks back.
  ~DeviceMirror();
  DeviceMirror(const DeviceMirror &) = delete;
  DeviceMirror &operator=(const DeviceMirror &) = delete;

  /// The device copy of `t` that stays between steps: the one held, or a
  /// new one with the host's bytes.
  char *place(const HostTensor &t);
  /// The mirror of `t`, or null.
  char *find(const HostTensor &t) const;
  /// Whether another tensor's mirror shares bytes with `t`.
  bool overlapsAnother(const HostTensor &t) const;
  /// The step wrote `t`'s mirror: the host's bytes are stale.
  void wrote(const HostTensor &t);
  /// Takes over a block the program returned (`data` inside `block`) as
  /// the mirror of the new host tensor `t`, whose bytes are stale.
  void adopt(const HostTensor &t, void *block, char *data);
  /// Brings the host's bytes of each of `tensors` that is mirrored up to
  /// date (waiting for the device once).
  void syncToHost(const std::vector<HostTensor> &tensors);
  /// Drops the mirrors of tensors only the mirror still holds.
  void collect();

  /// Tensors mirrored, and of those how many have stale host bytes.
  size_t size() const { return mirrors.size(); }
  size_t stale() const;

private:
  struct Mirror {
    HostTensor host;
    void *block;
    char *data;
    bool hostStale;
  };
  const Mirror *lookup(const HostTensor &t) const;
  Mirror *lookup(const HostTensor &t);
  void drop(size_t i);

  Device &device;
  std::vector<Mirror> mirrors;
};

/// This thread's (its rank's) device memory of type `DeviceT` and the
/// mirror over it. The mirror is made second, so it goes first at the
/// thread's end and gives its blocks back to a device still there.
template <typename DeviceT> struct ThreadMirror {
  static DeviceT &device() {
    static thread_local DeviceT memory;
    return memory;
  }
  static DeviceMirror &mirror() {
    static thread_local DeviceMirror kept(device());
    return kept;
  }
};

} // namespace ober::rt

#endif // OBER_LIB_RUNTIME_EXECUTABLE_DEVICEMIRROR_H
