//===- CUDATarget.cpp - programs whose buffers are GPU memory -------------===//
//
// Part of Ober-Train's runtime (no MLIR). The CUDA target's half of
// Target.h. Each rank runs on one GPU (its local rank's, modulo the GPUs it
// sees). The executable's tensors stay in host memory, where checkpoints,
// data and tracking read them; a step copies its arguments to the GPU,
// runs the program there (its buffers, kernels and cuBLASLt products all
// on the device) and copies back what it wrote and returned.
//
// Copying every argument each step costs the PCIe time of the parameters
// and optimizer state twice over; keeping them resident on the GPU between
// steps is the next step for speed (the values returned in place are the
// ones to keep). Copies, kernels and library calls queue on the thread's
// program stream (Modules.h); the step waits for it once, before its
// results are read.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "Target.h"

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/Modules.h"
#include "ober/Runtime/LaunchEnv.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>

using namespace ober::rt;

namespace {

/// The GPU of this rank: its local rank's among those visible.
int rankDevice() {
  ober_rt_launch_env env;
  char error[256];
  int local = 0;
  if (ober_rt_read_launch_env(&env, nullptr, nullptr, error, sizeof(error)) ==
      0)
    local = env.local_rank;
  return local % cuda::deviceCount();
}

/// Device blocks freed when the step is done with them (on the program
/// stream, after what it queued).
struct DeviceBlocks {
  cuda::CachingAllocator &memory;
  std::vector<void *> blocks;
  void *take(size_t bytes) {
    blocks.push_back(memory.allocate(std::max<size_t>(bytes, 1),
                                     cuda::programStream()));
    return blocks.back();
  }
  ~DeviceBlocks() {
    for (void *b : blocks)
      cuda::guarded("error", [&] { memory.free(b); });
  }
};

/// Where a result the program returned lives: a block it allocated, or
/// inside an argument's copy (then it is that argument's host buffer).
struct ResultPlace {
  const HostTensor *host = nullptr;
  char *deviceBase = nullptr;
};

} // namespace

bool ober::rt::prepareRank(const Program &program, int threads,
                           const std::string &self) {
  (void)program;
  (void)threads;
  try {
    int ordinal = rankDevice();
    cuda::sharedDevice(ordinal).makeCurrent();
    return true;
  } catch (const cuda::CudaError &e) {
    reportError(self, e.what());
    return false;
  }
}

namespace {
std::vector<HostTensor> invokeOnDevice(Entry entry, const Program &program,
                                       int64_t stage,
                                       const std::vector<HostTensor> &args) {
  cuda::CachingAllocator &memory =
      cuda::deviceAllocator(cuda::currentDevice());
  CUstream stream = cuda::programStream();
  DeviceBlocks copies{memory, {}}, returned{memory, {}};
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<char *> onDevice;
  for (const HostTensor &t : args) {
    auto *d = static_cast<char *>(copies.take(t.byteSize()));
    cuda::copyToDeviceAsync(d, t.data(), t.byteSize(), stream);
    std::vector<int64_t> words = t.descriptor();
    words[0] = words[1] = reinterpret_cast<int64_t>(d);
    descriptors.push_back(std::move(words));
    onDevice.push_back(d);
  }
  std::vector<int64_t> results =
      callEntry(entry, program, stage, descriptors);

  std::vector<HostTensor> out;
  out.reserve(program.results.size()); // ResultPlace points into it
  std::map<void *, ResultPlace> blocks;
  for (size_t i = 0; i < args.size(); ++i)
    blocks[onDevice[i]] = {&args[i], onDevice[i]};
  size_t at = 0;
  for (const ProgramResult &r : program.results) {
    size_t bytes = static_cast<size_t>(elementCount(r.shape)) *
                   dtypeSize(r.dtype);
    if (int64_t arg = r.inPlaceIn(stage); arg >= 0) { // written in place
      cuda::copyToHostAsync(args[arg].data(), onDevice[arg], bytes, stream);
      out.push_back(args[arg]);
      continue;
    }
    auto *block = reinterpret_cast<void *>(results[at]);
    char *data = reinterpret_cast<char *>(results[at + 1]) +
                 results[at + 2] * dtypeSize(r.dtype);
    at += 3 + 2 * r.shape.size();
    auto known = blocks.find(block);
    if (known == blocks.end()) { // a new buffer of the program's
      HostTensor t(r.dtype, r.shape);
      cuda::copyToHostAsync(t.data(), data, bytes, stream);
      returned.blocks.push_back(block);
      out.push_back(t);
      blocks[block] = {&out.back(), data};
      continue;
    }
    // Inside a buffer already known: its host tensor holds the bytes
    // (when they lie within it; else a copy of their own).
    const ResultPlace &place = known->second;
    std::ptrdiff_t offset = data - place.deviceBase;
    if (offset < 0 ||
        static_cast<size_t>(offset) + bytes > place.host->byteSize()) {
      HostTensor t(r.dtype, r.shape);
      cuda::copyToHostAsync(t.data(), data, bytes, stream);
      out.push_back(t);
      continue;
    }
    char *host = place.host->data() + offset;
    cuda::copyToHostAsync(host, data, bytes, stream);
    out.push_back(HostTensor::share(*place.host, r.dtype, r.shape, host));
  }
  cuda::check(cuda::driver().cuStreamSynchronize(stream),
              "cuStreamSynchronize of the program's stream");
  return out;
}
} // namespace

std::vector<HostTensor> ober::rt::invoke(Entry entry, const Program &program,
                                         int64_t stage,
                                         const std::vector<HostTensor> &args) {
  // The step cannot go on after a failure (out of GPU memory, a failed
  // copy): end the rank, and with it the job, rather than leave the
  // others waiting.
  return cuda::guarded(
      "error", [&] { return invokeOnDevice(entry, program, stage, args); });
}

double ober::rt::devicePeakBytes() {
  return cuda::guarded("error", [] {
    return static_cast<double>(
        cuda::deviceAllocator(cuda::currentDevice()).stats().peakInUse);
  });
}

void ober::rt::resetDevicePeak() {
  cuda::guarded("error",
                [] { cuda::deviceAllocator(cuda::currentDevice()).resetPeak(); });
}
