//===- CUDA.h - the CUDA driver API, loaded when first needed ---*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). Training binaries must start, and
// say clearly why they cannot run, on machines without an NVIDIA driver, so
// nothing here links libcuda: the driver is opened with dlopen the first
// time a function below needs it, and every entry point is resolved with
// dlsym under its versioned name. cuda.h is included for its types only.
//
// Errors are CudaError exceptions. A machine that cannot run CUDA at all
// (no libcuda.so.1, cuInit failing, no device) gives a message starting
// with "no CUDA device"; any other failure names the driver call and the
// CUresult's name and description.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_CUDA_H
#define OBER_RUNTIME_DEVICES_CUDA_H

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ober::rt::cuda {

/// A failed driver call, or a machine without a usable CUDA device.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The prefix of every error meaning "this machine cannot run CUDA".
inline constexpr const char *kNoDevice = "no CUDA device";

/// The driver entry points the runtime calls, by their versioned symbol
/// names (cuda.h maps the plain names to these with macros).
// clang-format off
#define OBER_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuGetErrorName) X(cuGetErrorString) X(cuInit) X(cuDriverGetVersion)        \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)                        \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem_v2) X(cuDevicePrimaryCtxRetain)   \
  X(cuDevicePrimaryCtxRelease_v2) X(cuCtxSetCurrent) X(cuCtxGetCurrent)        \
  X(cuCtxGetDevice) X(cuCtxSynchronize) X(cuMemAlloc_v2) X(cuMemFree_v2)       \
  X(cuMemAllocManaged) X(cuMemGetInfo_v2) X(cuMemcpyHtoD_v2)                   \
  X(cuMemcpyDtoH_v2) X(cuMemcpyHtoDAsync_v2) X(cuMemcpyDtoHAsync_v2)           \
  X(cuMemcpyDtoDAsync_v2) X(cuMemcpyAsync) X(cuMemcpy2DAsync_v2)              \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD16Async) X(cuMemsetD32Async) X(cuStreamCreate)                    \
  X(cuStreamDestroy_v2) X(cuStreamSynchronize) X(cuStreamWaitEvent)            \
  X(cuStreamQuery) X(cuEventCreate) X(cuEventDestroy_v2) X(cuEventRecord)      \
  X(cuEventSynchronize) X(cuEventQuery) X(cuEventElapsedTime_v2)               \
  X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleLoadFatBinary)           \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetLoadingMode)          \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx) X(cuFuncSetAttribute)
// clang-format on

/// The driver's functions, resolved from libcuda.so.1.
struct DriverApi {
#define OBER_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  OBER_CUDA_DRIVER_FUNCTIONS(OBER_CUDA_DECLARE)
#undef OBER_CUDA_DECLARE
  /// The driver's CUDA version, 1000 * major + 10 * minor.
  int version = 0;
  int deviceCount = 0;
};

/// The driver, opened and initialized (cuInit) by the first call of any
/// thread; throws CudaError ("no CUDA device: ...") on every call when
/// that failed.
const DriverApi &driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or the number when the
/// driver cannot name it.
std::string resultName(CUresult result);
/// Throws CudaError "`what` failed: <resultName>" unless `result` is
/// CUDA_SUCCESS.
void check(CUresult result, const std::string &what);

/// Device pointers are passed as plain pointers (unified addressing).
inline CUdeviceptr devicePointer(const void *p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

/// What the runtime needs to know about a device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  int multiprocessors = 0;
  size_t totalMemory = 0;
  /// Peak clocks, kHz.
  int clockKHz = 0, memoryClockKHz = 0;
  int memoryBusBits = 0;
  /// The largest pitch cuMemcpy2D takes (2 GiB - 1 on today's GPUs).
  size_t maxCopyPitch = 0;
  /// The most shared memory a block may ask for (opting in above 48 KB):
  /// 163 KB on sm_80, 227 KB on sm_90, 99 KB on sm_86/89.
  int maxSharedPerBlock = 0;
};

/// One GPU, through its primary context (the one the CUDA runtime,
/// cuBLASLt and NCCL share). Constructing it makes that context current
/// on the calling thread; other threads call makeCurrent().
class Device {
public:
  /// Throws CudaError when the driver is unusable or `ordinal` is not a
  /// device (the message says how many there are).
  explicit Device(int ordinal = 0);
  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const DeviceInfo &info() const { return properties; }
  int ordinal() const { return properties.ordinal; }
  const std::string &name() const { return properties.name; }
  CUdevice handle() const { return device; }
  CUcontext context() const { return primary; }

  /// Makes the primary context current on the calling thread (a no-op
  /// when it already is).
  void makeCurrent() const;
  /// Waits for all work of the context.
  void synchronize() const;

private:
  DeviceInfo properties;
  CUdevice device = 0;
  CUcontext primary = nullptr;
};

/// Asks the driver, before anything starts it, to load a module's kernels
/// with the module: sets CUDA_MODULE_LOADING=EAGER in the environment
/// unless it already chooses a mode. Programs on several GPUs want this:
/// under lazy loading (the default since CUDA 12.2) a kernel's first
/// launch may wait until the device is idle, so for an NCCL kernel waiting
/// on a peer that may in turn wait on this rank, and the job hangs. Call
/// it before the process starts other threads (it changes the environment)
/// and before MPI_Init. Returns false, changing nothing, when this runtime
/// has loaded the driver already.
bool preferEagerKernelLoading();
/// Whether the driver loads kernels when first launched (lazily).
bool lazyKernelLoading();

/// The number of devices; throws CudaError ("no CUDA device: ...") when
/// there are none.
int deviceCount();

/// The process-wide Device of `ordinal`, opened on first use and kept for
/// the life of the process (never destroyed: code running in static
/// destructors and llvm.global_dtors may still use it). Makes its context
/// current on the calling thread.
Device &sharedDevice(int ordinal);

/// The ordinal of the device whose context is current on the calling
/// thread; makes device 0's primary context current when there is none.
int currentDevice();

/// A stream of the current context; owns it.
class Stream {
public:
  /// `nonBlocking`: the stream does not synchronize with the legacy
  /// default stream (what libraries and generated code expect).
  explicit Stream(bool nonBlocking = true);
  ~Stream();
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&other) noexcept;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  CUstream get() const { return stream; }
  void synchronize() const;
  /// Work queued on this stream later waits for `event`'s work.
  void waitFor(const class Event &event) const;

private:
  CUstream stream = nullptr;
};

/// An event of the current context; owns it.
class Event {
public:
  /// `timing`: whether elapsedMs works (events without timing are cheaper
  /// to record and wait on).
  explicit Event(bool timing = true);
  ~Event();
  Event(Event &&other) noexcept;
  Event &operator=(Event &&other) noexcept;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  CUevent get() const { return event; }
  /// Marks the point in `stream` reached by the work queued so far.
  void record(CUstream stream);
  void synchronize() const;
  /// Whether the recorded work has finished.
  bool done() const;
  /// Milliseconds between `start`'s and this event's recorded points.
  float elapsedMsSince(const Event &start) const;

private:
  CUevent event = nullptr;
};

// Copies between host and device memory (`bytes` each). The asynchronous
// ones queue the copy on `stream`; host memory that is not page-locked is
// staged by the driver, so the call may return only once it is read.
void copyToDeviceAsync(void *device, const void *host, size_t bytes,
                       CUstream stream);
void copyToHostAsync(void *host, const void *device, size_t bytes,
                     CUstream stream);
void copyDeviceAsync(void *to, const void *from, size_t bytes, CUstream stream);
/// Any direction, the driver finding out from the pointers.
void copyAsync(void *to, const void *from, size_t bytes, CUstream stream);
/// `rows` rows of `width` bytes, each `fromPitch` (`toPitch`) bytes after
/// the last, in any direction.
void copyRowsAsync(void *to, size_t toPitch, const void *from,
                   size_t fromPitch, size_t width, size_t rows,
                   CUstream stream);
void copyToDevice(void *device, const void *host, size_t bytes);
void copyToHost(void *host, const void *device, size_t bytes);

/// Sets `count` bytes, 16-bit or 32-bit words at `device` to `value`.
void memset8Async(void *device, uint8_t value, size_t count, CUstream stream);
void memset16Async(void *device, uint16_t value, size_t count, CUstream stream);
void memset32Async(void *device, uint32_t value, size_t count, CUstream stream);

} // namespace ober::rt::cuda

#endif // OBER_RUNTIME_DEVICES_CUDA_H
