//===- DeviceMemory.cpp - the caching allocator over the CUDA driver ------===//
//
// Part of Ober-Train's runtime (no MLIR). The MemoryBackend of a CUDA
// device: segments from cuMemAlloc_v2, markers as events without timing.
// One allocator per device, kept for the life of the process because
// generated code frees memory from llvm.global_dtors too.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"

#include <map>
#include <mutex>

using namespace ober::rt::cuda;

namespace {
class CudaMemoryBackend final : public MemoryBackend {
public:
  explicit CudaMemoryBackend(Device &device) : device(device) {}

  void *allocate(size_t bytes) override {
    device.makeCurrent();
    CUdeviceptr memory = 0;
    CUresult r = driver().cuMemAlloc_v2(&memory, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
      return nullptr;
    check(r, "cuMemAlloc_v2 of " + std::to_string(bytes) + " bytes on " +
                 describe());
    return reinterpret_cast<void *>(memory);
  }

  void release(void *memory) override {
    device.makeCurrent();
    check(driver().cuMemFree_v2(devicePointer(memory)), "cuMemFree_v2");
  }

  void synchronize() override { device.synchronize(); }

  void *recordMarker(StreamKey stream) override {
    device.makeCurrent();
    const DriverApi &d = driver();
    CUevent event = nullptr;
    check(d.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    CUresult r = d.cuEventRecord(
        event, const_cast<CUstream>(static_cast<const CUstream_st *>(stream)));
    if (r != CUDA_SUCCESS)
      d.cuEventDestroy_v2(event);
    check(r, "cuEventRecord (a freed block's use on another stream)");
    return event;
  }

  bool markerPassed(void *marker) override {
    CUresult r = driver().cuEventQuery(static_cast<CUevent>(marker));
    if (r == CUDA_ERROR_NOT_READY)
      return false;
    check(r, "cuEventQuery");
    return true;
  }

  void destroyMarker(void *marker) override {
    driver().cuEventDestroy_v2(static_cast<CUevent>(marker));
  }

  size_t totalBytes() const override { return device.info().totalMemory; }

  std::string describe() const override {
    return "CUDA device " + std::to_string(device.ordinal()) + " (" +
           device.name() + ")";
  }

private:
  Device &device;
};
} // namespace

CachingAllocator &ober::rt::cuda::deviceAllocator(int ordinal) {
  static std::mutex mutex;
  static auto *allocators = new std::map<int, CachingAllocator *>;
  Device &device = sharedDevice(ordinal); // throws without a device
  std::lock_guard<std::mutex> lock(mutex);
  CachingAllocator *&slot = (*allocators)[ordinal];
  if (!slot)
    slot = new CachingAllocator(*new CudaMemoryBackend(device));
  return *slot;
}
