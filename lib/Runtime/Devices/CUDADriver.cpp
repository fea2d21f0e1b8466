//===- CUDADriver.cpp - the CUDA driver API, loaded when first needed -----===//
//
// Part of Ober-Train's runtime (no MLIR). libcuda.so.1 is opened on the
// first call of driver(), never at static initialization, so that a binary
// linked with this library starts on a machine without a driver; the
// outcome (the function table or the reason it is unusable) is kept for
// the life of the process.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"

#include "Library.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

using namespace ober::rt::cuda;

namespace {

/// The loaded driver, or why there is none.
struct DriverState {
  DriverApi api;
  std::string error;
};

DriverState *loaded = nullptr; // set once, never freed
/// Whether load() has begun.
std::atomic<bool> loadBegun{false};

/// Drivers older than CUDA 12.8 export some functions only under the name
/// their newer version replaced.
const char *previousName(const char *symbol) {
  if (std::strcmp(symbol, "cuEventElapsedTime_v2") == 0)
    return "cuEventElapsedTime";
  return nullptr;
}

/// Fills `api` from `library`; returns the symbols it lacks, ", "-separated.
std::string bindAll(const detail::Library &library, DriverApi &api) {
  std::string missing;
#define OBER_CUDA_BIND(name)                                                   \
  detail::bindSymbol(library, api.name, #name, missing, previousName(#name));
  OBER_CUDA_DRIVER_FUNCTIONS(OBER_CUDA_BIND)
#undef OBER_CUDA_BIND
  return missing;
}

std::string versionText(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

std::string noDevice(const std::string &why) {
  return std::string(kNoDevice) + ": " + why;
}

/// Opens and initializes the driver; never throws.
DriverState *load() {
  loadBegun = true;
  auto *state = new DriverState;
  detail::Library library = detail::openLibrary({"libcuda.so.1"});
  if (!library.handle) {
    state->error = noDevice("libcuda.so.1 not found (no NVIDIA driver on "
                            "this machine): " +
                            library.error);
    return state;
  }
  DriverApi &api = state->api;
  std::string missing = bindAll(library, api);
  if (api.cuDriverGetVersion)
    api.cuDriverGetVersion(&api.version);
  if (!missing.empty()) {
    state->error = "libcuda.so.1 (driver for CUDA " + versionText(api.version) +
                   ") lacks " + missing +
                   ": the runtime needs a driver for CUDA 12.0 or newer";
    return state;
  }
  if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    state->error = noDevice("cuInit failed: " + resultName(r));
    return state;
  }
  CUresult r = api.cuDeviceGetCount(&api.deviceCount);
  if (r != CUDA_SUCCESS)
    state->error = noDevice("cuDeviceGetCount failed: " + resultName(r));
  else if (api.deviceCount == 0)
    state->error = noDevice("the driver (CUDA " + versionText(api.version) +
                            ") reports no devices");
  return state;
}

/// The API when loading succeeded, else null; never throws.
const DriverApi *loadedApi() {
  static std::once_flag once;
  std::call_once(once, [] { loaded = load(); });
  return loaded->error.empty() ? &loaded->api : nullptr;
}

/// The current context, or device 0's primary one when the thread has
/// none, so that streams, events and memory made by a thread that never
/// chose a device go where the CUDA runtime would put them.
void ensureContext() {
  CUcontext current = nullptr;
  check(driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (!current)
    sharedDevice(0);
}

DeviceInfo queryDevice(const DriverApi &d, CUdevice device, int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {0};
  check(d.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
  info.name = name;
  auto attribute = [&](CUdevice_attribute which, int &out, const char *what) {
    check(d.cuDeviceGetAttribute(&out, which, device),
          std::string("cuDeviceGetAttribute(") + what + ")");
  };
  attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, info.computeMajor,
            "compute capability major");
  attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, info.computeMinor,
            "compute capability minor");
  attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, info.multiprocessors,
            "multiprocessor count");
  attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, info.clockKHz, "clock rate");
  attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, info.memoryClockKHz,
            "memory clock rate");
  attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, info.memoryBusBits,
            "memory bus width");
  int pitch = 0;
  attribute(CU_DEVICE_ATTRIBUTE_MAX_PITCH, pitch, "max pitch");
  info.maxCopyPitch = static_cast<size_t>(pitch);
  attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            info.maxSharedPerBlock, "max shared memory per block (opt-in)");
  check(d.cuDeviceTotalMem_v2(&info.totalMemory, device),
        "cuDeviceTotalMem_v2");
  return info;
}

std::string bytesText(size_t bytes) { return std::to_string(bytes) + " bytes"; }

/// Names of the results cuInit gives on a broken installation, for when
/// the library cannot name them itself (the toolkit's stub cannot).
const char *knownResult(CUresult result) {
  switch (result) {
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY (libcuda.so.1 is the toolkit's stub, "
           "not a driver)";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (the driver and its kernel "
           "module differ in version)";
  default:
    return nullptr;
  }
}
} // namespace

const DriverApi &ober::rt::cuda::driver() {
  if (const DriverApi *api = loadedApi())
    return *api;
  throw CudaError(loaded->error);
}

std::string ober::rt::cuda::resultName(CUresult result) {
  const DriverApi *api = loaded ? &loaded->api : nullptr;
  const char *name = nullptr, *text = nullptr;
  if (api && api->cuGetErrorName)
    api->cuGetErrorName(result, &name);
  if (api && api->cuGetErrorString)
    api->cuGetErrorString(result, &text);
  if (!name)
    if (const char *known = knownResult(result))
      return known;
  std::string out = name ? name : "CUresult " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void ober::rt::cuda::check(CUresult result, const std::string &what) {
  if (result != CUDA_SUCCESS)
    throw CudaError(what + " failed: " + resultName(result));
}

int ober::rt::cuda::deviceCount() { return driver().deviceCount; }

bool ober::rt::cuda::preferEagerKernelLoading() {
  if (loadBegun)
    return false;
  // libcuda reads it in cuInit (which a CUDA-aware MPI_Init may call).
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
  return true;
}

bool ober::rt::cuda::lazyKernelLoading() {
  CUmoduleLoadingMode mode = CU_MODULE_EAGER_LOADING;
  check(driver().cuModuleGetLoadingMode(&mode), "cuModuleGetLoadingMode");
  return mode == CU_MODULE_LAZY_LOADING;
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

Device::Device(int ordinal) {
  const DriverApi &d = driver();
  if (ordinal < 0 || ordinal >= d.deviceCount)
    throw CudaError(
        "CUDA device " + std::to_string(ordinal) +
        " does not exist: the driver reports " + std::to_string(d.deviceCount) +
        " device(s), ordinals 0 to " + std::to_string(d.deviceCount - 1));
  std::string which = "(device " + std::to_string(ordinal) + ")";
  check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet" + which);
  check(d.cuDevicePrimaryCtxRetain(&primary, device),
        "cuDevicePrimaryCtxRetain" + which);
  makeCurrent();
  properties = queryDevice(d, device, ordinal);
}

Device::~Device() {
  if (primary)
    driver().cuDevicePrimaryCtxRelease_v2(device);
}

void Device::makeCurrent() const {
  const DriverApi &d = driver();
  CUcontext current = nullptr;
  check(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != primary)
    check(d.cuCtxSetCurrent(primary),
          "cuCtxSetCurrent(device " + std::to_string(ordinal()) + ")");
}

void Device::synchronize() const {
  makeCurrent();
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize");
}

Device &ober::rt::cuda::sharedDevice(int ordinal) {
  static std::mutex mutex;
  static auto *devices = new std::map<int, Device *>; // never destroyed
  Device *device;
  {
    std::lock_guard<std::mutex> lock(mutex);
    Device *&slot = (*devices)[ordinal];
    if (!slot) {
      try {
        slot = new Device(ordinal);
      } catch (...) {
        devices->erase(ordinal);
        throw;
      }
    }
    device = slot;
  }
  device->makeCurrent();
  return *device;
}

int ober::rt::cuda::currentDevice() {
  const DriverApi &d = driver();
  CUcontext context = nullptr;
  check(d.cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (!context)
    return sharedDevice(0).ordinal();
  CUdevice device = 0;
  check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  return static_cast<int>(device); // the driver's handles are the ordinals
}

//===----------------------------------------------------------------------===//
// Stream and Event
//===----------------------------------------------------------------------===//

Stream::Stream(bool nonBlocking) {
  ensureContext();
  check(driver().cuStreamCreate(&stream, nonBlocking ? CU_STREAM_NON_BLOCKING
                                                     : CU_STREAM_DEFAULT),
        "cuStreamCreate");
}

Stream::~Stream() {
  if (stream)
    driver().cuStreamDestroy_v2(stream);
}

Stream::Stream(Stream &&other) noexcept : stream(other.stream) {
  other.stream = nullptr;
}

Stream &Stream::operator=(Stream &&other) noexcept {
  std::swap(stream, other.stream);
  return *this;
}

void Stream::synchronize() const {
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void Stream::waitFor(const Event &event) const {
  check(driver().cuStreamWaitEvent(stream, event.get(), 0),
        "cuStreamWaitEvent");
}

Event::Event(bool timing) {
  ensureContext();
  check(driver().cuEventCreate(&event, timing ? CU_EVENT_DEFAULT
                                              : CU_EVENT_DISABLE_TIMING),
        "cuEventCreate");
}

Event::~Event() {
  if (event)
    driver().cuEventDestroy_v2(event);
}

Event::Event(Event &&other) noexcept : event(other.event) {
  other.event = nullptr;
}

Event &Event::operator=(Event &&other) noexcept {
  std::swap(event, other.event);
  return *this;
}

void Event::record(CUstream stream) {
  check(driver().cuEventRecord(event, stream), "cuEventRecord");
}

void Event::synchronize() const {
  check(driver().cuEventSynchronize(event), "cuEventSynchronize");
}

bool Event::done() const {
  CUresult r = driver().cuEventQuery(event);
  if (r == CUDA_ERROR_NOT_READY)
    return false;
  check(r, "cuEventQuery");
  return true;
}

float Event::elapsedMsSince(const Event &start) const {
  float ms = 0;
  check(driver().cuEventElapsedTime_v2(&ms, start.event, event),
        "cuEventElapsedTime");
  return ms;
}

//===----------------------------------------------------------------------===//
// Copies and memset
//===----------------------------------------------------------------------===//

void ober::rt::cuda::copyToDeviceAsync(void *device, const void *host,
                                       size_t bytes, CUstream stream) {
  check(
      driver().cuMemcpyHtoDAsync_v2(devicePointer(device), host, bytes, stream),
      "cuMemcpyHtoDAsync_v2 of " + bytesText(bytes));
}

void ober::rt::cuda::copyToHostAsync(void *host, const void *device,
                                     size_t bytes, CUstream stream) {
  check(
      driver().cuMemcpyDtoHAsync_v2(host, devicePointer(device), bytes, stream),
      "cuMemcpyDtoHAsync_v2 of " + bytesText(bytes));
}

void ober::rt::cuda::copyDeviceAsync(void *to, const void *from, size_t bytes,
                                     CUstream stream) {
  check(driver().cuMemcpyDtoDAsync_v2(devicePointer(to), devicePointer(from),
                                      bytes, stream),
        "cuMemcpyDtoDAsync_v2 of " + bytesText(bytes));
}

void ober::rt::cuda::copyAsync(void *to, const void *from, size_t bytes,
                               CUstream stream) {
  check(driver().cuMemcpyAsync(devicePointer(to), devicePointer(from), bytes,
                               stream),
        "cuMemcpyAsync of " + bytesText(bytes));
}

void ober::rt::cuda::copyRowsAsync(void *to, size_t toPitch, const void *from,
                                   size_t fromPitch, size_t width, size_t rows,
                                   CUstream stream) {
  if (!rows || !width)
    return;
  if (rows == 1 || (width == fromPitch && width == toPitch))
    return copyAsync(to, from, width * rows, stream);
  // Rows further apart than cuMemcpy2D reaches (a block of a large tensor
  // regrouped for a collective): a copy per row.
  size_t limit = sharedDevice(currentDevice()).info().maxCopyPitch;
  if (fromPitch > limit || toPitch > limit) {
    for (size_t r = 0; r < rows; ++r)
      copyAsync(static_cast<char *>(to) + r * toPitch,
                static_cast<const char *>(from) + r * fromPitch, width, stream);
    return;
  }
  CUDA_MEMCPY2D copy = {};
  copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.srcDevice = devicePointer(from);
  copy.srcPitch = fromPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.dstDevice = devicePointer(to);
  copy.dstPitch = toPitch;
  copy.WidthInBytes = width;
  copy.Height = rows;
  check(driver().cuMemcpy2DAsync_v2(&copy, stream),
        "cuMemcpy2DAsync of " + std::to_string(rows) + " rows of " +
            bytesText(width));
}

void ober::rt::cuda::copyToDevice(void *device, const void *host,
                                  size_t bytes) {
  check(driver().cuMemcpyHtoD_v2(devicePointer(device), host, bytes),
        "cuMemcpyHtoD_v2 of " + bytesText(bytes));
}

void ober::rt::cuda::copyToHost(void *host, const void *device, size_t bytes) {
  check(driver().cuMemcpyDtoH_v2(host, devicePointer(device), bytes),
        "cuMemcpyDtoH_v2 of " + bytesText(bytes));
}

void ober::rt::cuda::memset8Async(void *device, uint8_t value, size_t count,
                                  CUstream stream) {
  check(driver().cuMemsetD8Async(devicePointer(device), value, count, stream),
        "cuMemsetD8Async of " + bytesText(count));
}

void ober::rt::cuda::memset16Async(void *device, uint16_t value, size_t count,
                                   CUstream stream) {
  check(driver().cuMemsetD16Async(devicePointer(device), value, count, stream),
        "cuMemsetD16Async of " + std::to_string(count) + " 16-bit words");
}

void ober::rt::cuda::memset32Async(void *device, uint32_t value, size_t count,
                                   CUstream stream) {
  check(driver().cuMemsetD32Async(devicePointer(device), value, count, stream),
        "cuMemsetD32Async of " + std::to_string(count) + " 32-bit words");
}
