//===- GpuRuntimeWrappers.cpp - the mgpu* C ABI of MLIR's host code -------===//
//
// Part of Ober-Train's runtime (no MLIR). What MLIR's CudaRuntimeWrappers
// provides, over this runtime's lazily loaded driver: image registration
// that touches no driver (it runs in llvm.global_ctors), memory from the
// caching allocator, and failures reported as "ober: ..." with exit status
// OBER_RT_EXIT_GPU (C callers cannot catch an exception).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/KernelProfile.h"
#include "ober/Runtime/Devices/Modules.h"

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

using namespace ober::rt::cuda;

namespace {
/// Dynamic shared memory a kernel gets without opting in, bytes.
constexpr int32_t kDefaultSharedMemoryLimit = 48 << 10;

/// The device mgpuSetDefaultDevice chose for this thread; -1: the device
/// of the thread's current context (a rank's, which prepareRank made
/// current), else device 0.
thread_local int32_t defaultDevice = -1;

int32_t deviceOrdinal() {
  return defaultDevice >= 0 ? defaultDevice : currentDevice();
}

/// The thread's device, its context made current.
Device &current() { return sharedDevice(deviceOrdinal()); }

/// Registered images: one counted handle per image address.
struct ModuleRegistry {
  std::mutex mutex;
  std::map<const void *, std::pair<KernelModule *, int>> byImage;
};
ModuleRegistry &modules() {
  static auto *registry = new ModuleRegistry; // outlives global_dtors
  return *registry;
}

void *registerImage(const void *data, size_t size, ImageFormat format,
                    int optLevel) {
  ModuleRegistry &r = modules();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto &[module, count] = r.byImage[data];
  if (!module)
    module = new KernelModule(data, size, format, optLevel);
  ++count;
  return module;
}

/// Managed allocations (isHostShared), freed directly rather than cached.
std::mutex managedMutex;
std::set<void *> &managed() {
  static auto *set = new std::set<void *>;
  return *set;
}

unsigned dimension(intptr_t value, const char *what) {
  if (value < 1 || value > UINT_MAX)
    throw CudaError(std::string(what) + " " + std::to_string(value) +
                    " is out of range (1 to " + std::to_string(UINT_MAX) + ")");
  return static_cast<unsigned>(value);
}

/// Lets `function` use more than the default dynamic shared memory.
void allowSharedMemory(CUfunction function, int32_t smem) {
  if (smem <= kDefaultSharedMemoryLimit)
    return;
  check(driver().cuFuncSetAttribute(
            function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
        "raising the dynamic shared memory of " + kernelName(function) +
            " to " + std::to_string(smem) + " bytes");
}

std::string launchText(CUfunction function, const unsigned grid[3],
                       const unsigned block[3], int32_t smem) {
  auto dims = [](const unsigned d[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" +
           std::to_string(d[2]);
  };
  return "launching " + kernelName(function) + " (grid " + dims(grid) +
         ", block " + dims(block) + ", " + std::to_string(smem) +
         " bytes of dynamic shared memory)";
}
} // namespace

void ober::rt::cuda::exitOnGpuFailure(const char *what,
                                      const std::string &message) {
  std::fprintf(stderr, "ober: %s: %s\n", what, message.c_str());
  std::fflush(nullptr); // the steps printed so far too
  // Not std::exit: other ranks' threads may still be launching kernels
  // from the modules that global destructors would unload.
  std::_Exit(OBER_RT_EXIT_GPU);
}

extern "C" {

void *mgpuModuleLoad(void *data, size_t gpuBlobSize) {
  return guarded(__func__, [&] {
    return registerImage(data, gpuBlobSize, ImageFormat::Auto, -1);
  });
}

void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return guarded(__func__, [&] {
    size_t size = data ? std::strlen(static_cast<const char *>(data)) + 1 : 0;
    return registerImage(data, size, ImageFormat::PTX, optLevel);
  });
}

void mgpuModuleUnload(void *module) {
  ModuleRegistry &r = modules();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto it = r.byImage.begin(); it != r.byImage.end(); ++it)
    if (it->second.first == module) {
      if (--it->second.second == 0) {
        delete it->second.first;
        r.byImage.erase(it);
      }
      return;
    }
}

CUfunction mgpuModuleGetFunction(void *module, const char *name) {
  return guarded(__func__, [&] {
    current();
    return static_cast<KernelModule *>(module)->getFunction(name);
  });
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  guarded(__func__, [&] {
    unsigned grid[3] = {dimension(gridX, "grid x"), dimension(gridY, "grid y"),
                        dimension(gridZ, "grid z")};
    unsigned block[3] = {dimension(blockX, "block x"),
                         dimension(blockY, "block y"),
                         dimension(blockZ, "block z")};
    current();
    allowSharedMemory(function, smem);
    KernelProfile *profile = KernelProfile::current();
    if (profile)
      profile->begin(stream);
    check(driver().cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0],
                                  block[1], block[2], smem, stream, params,
                                  extra),
          launchText(function, grid, block, smem));
    if (profile)
      profile->end(function, stream);
  });
}

void mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t smem, CUstream stream, void **params,
                             void **extra) {
  guarded(__func__, [&] {
    CUlaunchAttribute cluster = {};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = dimension(clusterX, "cluster x");
    cluster.value.clusterDim.y = dimension(clusterY, "cluster y");
    cluster.value.clusterDim.z = dimension(clusterZ, "cluster z");
    CUlaunchConfig config = {};
    unsigned grid[3] = {dimension(gridX, "grid x"), dimension(gridY, "grid y"),
                        dimension(gridZ, "grid z")};
    unsigned block[3] = {dimension(blockX, "block x"),
                         dimension(blockY, "block y"),
                         dimension(blockZ, "block z")};
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = block[0];
    config.blockDimY = block[1];
    config.blockDimZ = block[2];
    config.sharedMemBytes = smem;
    config.hStream = stream;
    config.attrs = &cluster;
    config.numAttrs = 1;
    current();
    allowSharedMemory(function, smem);
    KernelProfile *profile = KernelProfile::current();
    if (profile)
      profile->begin(stream);
    check(driver().cuLaunchKernelEx(&config, function, params, extra),
          launchText(function, grid, block, smem) + " in clusters of " +
              std::to_string(clusterX) + "x" + std::to_string(clusterY) + "x" +
              std::to_string(clusterZ));
    if (profile)
      profile->end(function, stream);
  });
}

CUstream mgpuStreamCreate(void) {
  return guarded(__func__, [] {
    current();
    return programStream();
  });
}

void mgpuStreamDestroy(CUstream stream) {
  guarded(__func__, [&] {
    if (stream == programStream())
      return;
    const DriverApi &d = driver();
    check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
    deviceAllocator(deviceOrdinal()).retireStream(stream);
    check(d.cuStreamDestroy_v2(stream), "cuStreamDestroy_v2");
  });
}

void mgpuStreamSynchronize(CUstream stream) {
  guarded(__func__, [&] {
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  });
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  guarded(__func__, [&] {
    check(driver().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
  });
}

CUevent mgpuEventCreate(void) {
  return guarded(__func__, [] {
    current();
    CUevent event = nullptr;
    check(driver().cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
    return event;
  });
}

void mgpuEventDestroy(CUevent event) {
  guarded(__func__, [&] {
    check(driver().cuEventDestroy_v2(event), "cuEventDestroy_v2");
  });
}

void mgpuEventSynchronize(CUevent event) {
  guarded(__func__, [&] {
    check(driver().cuEventSynchronize(event), "cuEventSynchronize");
  });
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  guarded(__func__, [&] {
    check(driver().cuEventRecord(event, stream), "cuEventRecord");
  });
}

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared) {
  return guarded(__func__, [&]() -> void * {
    if (!isHostShared)
      return deviceAllocator(deviceOrdinal()).allocate(sizeBytes, stream);
    current();
    CUdeviceptr memory = 0;
    check(driver().cuMemAllocManaged(&memory, sizeBytes, CU_MEM_ATTACH_GLOBAL),
          "cuMemAllocManaged of " + std::to_string(sizeBytes) + " bytes");
    std::lock_guard<std::mutex> lock(managedMutex);
    managed().insert(reinterpret_cast<void *>(memory));
    return reinterpret_cast<void *>(memory);
  });
}

void mgpuMemFree(void *ptr, CUstream stream) {
  guarded(__func__, [&] {
    if (!ptr)
      return;
    {
      std::lock_guard<std::mutex> lock(managedMutex);
      if (managed().erase(ptr)) {
        check(driver().cuMemFree_v2(devicePointer(ptr)), "cuMemFree_v2");
        return;
      }
    }
    CachingAllocator &allocator = deviceAllocator(deviceOrdinal());
    allocator.recordStream(ptr, stream); // a no-op on its own stream
    allocator.free(ptr);
  });
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream) {
  guarded(__func__, [&] { copyAsync(dst, src, sizeBytes, stream); });
}

void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  CUstream stream) {
  guarded(__func__, [&] { memset32Async(dst, value, count, stream); });
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream) {
  guarded(__func__, [&] { memset16Async(dst, value, count, stream); });
}

void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }

} // extern "C"
