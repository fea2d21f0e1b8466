//===- CUDATarget.cpp - programs whose buffers are GPU memory -------------===//
//
// Part of Ober-Train's runtime (no MLIR). The CUDA target's half of
// Target.h. Each rank runs on one GPU (its local rank's, modulo the GPUs it
// sees). The executable's tensors live in host memory, where checkpoints,
// data and tracking read them; the parameters and optimizer state a step
// writes in place stay on the GPU between steps (DeviceMirror.h) and come
// back to the host only when it reads them (syncToHost). A step copies its
// other arguments (the batch, the learning rate) to the GPU, runs the
// program there (its buffers, kernels and cuBLASLt products all on the
// device) and copies back what it returned in new buffers.
//
// Copies, kernels and library calls queue on the thread's program stream
// (Modules.h); the step waits for it once, before its results are read.
// A rank of a program on several GPUs loads its kernels eagerly, before
// its first collective (loadKernelsBeforeCollectives).
//
//===----------------------------------------------------------------------===//

#include "DeviceMirror.h"
#include "Run.h"
#include "Target.h"

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/CuBLASLt.h"
#include "ober/Runtime/Devices/KernelProfile.h"
#include "ober/Runtime/Devices/Modules.h"
#include "ober/Runtime/Devices/NCCL.h"
#include "ober/Runtime/LaunchEnv.h"

#include <cstdio>
#include <cstdlib>
#include <exception>

using namespace ober::rt;

namespace {

/// The GPU of rank `where`: its place among the ranks on its node (the
/// launcher's local rank, or its own rank where the ranks are threads)
/// among the GPUs visible. Ranks that are threads of one process need a
/// GPU each (NCCL refuses two ranks on one GPU).
int rankDevice(const Placement &where) {
  int64_t local = 0;
  ober_rt_launch_env env;
  char error[256];
  if (where.ranksInProcess > 1) {
    local = where.rank;
    if (where.ranksInProcess > cuda::deviceCount())
      throw cuda::CudaError(
          "the plan's " + std::to_string(where.ranksInProcess) +
          " devices run as threads of this process, one GPU each, but " +
          std::to_string(cuda::deviceCount()) +
          " GPU(s) are visible: launch with mpirun or srun across machines, "
          "or plan for fewer devices");
  } else if (ober_rt_read_launch_env(&env, nullptr, nullptr, error,
                                   sizeof(error)) == 0)
    local = env.local_rank;
  return static_cast<int>(local % cuda::deviceCount());
}

/// This thread's GPU memory as the mirror reaches it: the device's
/// caching allocator, copies queued on the program stream.
class GpuMemory final : public DeviceMirror::Device {
public:
  GpuMemory() : memory(cuda::deviceAllocator(cuda::currentDevice())) {}
  void *allocate(size_t bytes) override {
    return memory.allocate(bytes, cuda::programStream());
  }
  void free(void *block) override { memory.free(block); }
  void toDevice(void *device, const void *host, size_t bytes) override {
    cuda::copyToDeviceAsync(device, host, bytes, cuda::programStream());
  }
  void toHost(void *host, const void *device, size_t bytes) override {
    cuda::copyToHostAsync(host, device, bytes, cuda::programStream());
  }
  void finish() override {
    cuda::check(cuda::driver().cuStreamSynchronize(cuda::programStream()),
                "cuStreamSynchronize of the program's stream");
  }

private:
  cuda::CachingAllocator &memory;
};

/// The parameters and optimizer state this thread's rank keeps on its GPU.
using Kept = ThreadMirror<GpuMemory>;

/// Loads what the rank's kernels need before its first NCCL collective: a
/// module or kernel loaded later may wait for the device to drain, so for
/// an NCCL kernel waiting on a peer that may be waiting on this rank. What
/// fails here is tried again at its first use, which reports it if it
/// lasts: a warning says what the job risks meanwhile.
void loadKernelsBeforeCollectives(const Placement &where) {
  if (where.rank == 0 && cuda::lazyKernelLoading())
    std::fprintf(stderr,
                 "warning: the CUDA driver loads kernels lazily "
                 "(CUDA_MODULE_LOADING): a kernel's first launch may wait for "
                 "a peer's NCCL transfer; set CUDA_MODULE_LOADING=EAGER if "
                 "the job hangs in its first step\n");
  std::vector<std::string> failed = cuda::KernelModule::loadAllHere();
  try {
    cuda::openGemms();
  } catch (const cuda::CudaError &e) {
    failed.push_back(e.what());
  }
  for (const std::string &why : failed)
    std::fprintf(stderr,
                 "warning: rank %lld: %s; trying again at its first use, "
                 "where loading may wait for a peer\n",
                 static_cast<long long>(where.rank), why.c_str());
}

} // namespace

void ober::rt::prepareProcess(const Program &program) {
  if (program.devices() > 1)
    cuda::preferEagerKernelLoading();
}

bool ober::rt::prepareRank(const Program &program, const Placement &where,
                           int threads, const std::string &self) {
  (void)threads;
  try {
    int ordinal = rankDevice(where);
    cuda::sharedDevice(ordinal).makeCurrent();
    if (program.devices() > 1)
      loadKernelsBeforeCollectives(where);
    return true;
  } catch (const cuda::CudaError &e) {
    reportError(self, e.what());
    return false;
  }
}

std::unique_ptr<Transport> ober::rt::programTransport(Transport &bootstrap,
                                                      const Program &program,
                                                      const Placement &where) {
  if (program.devices() == 1)
    return nullptr;
  cuda::NcclTransport::Options options;
  options.bootstrapWorldGroup = where.worldGroup;
  // The stages this rank's sends and receives reach (a stage's place in
  // the group is its index), and the pairs that transfer.
  if (program.pipelineAxis >= 0 && !program.transfers.empty()) {
    options.pipelineGroup = where.grid.group(where.rank, {program.pipelineAxis});
    options.pipelinePairs = program.transfers;
  }
  try {
    return std::make_unique<cuda::NcclTransport>(
        bootstrap, cuda::currentDevice(), options);
  } catch (const cuda::CudaError &e) {
    throw CommError(e.what());
  }
}

std::vector<HostTensor> ober::rt::invoke(Entry entry, const Program &program,
                                         int64_t stage,
                                         const std::vector<HostTensor> &args) {
  // The step cannot go on after a failure (out of GPU memory, a failed
  // copy): end the rank, and with it the job, rather than leave the
  // others waiting.
  return cuda::guarded("error", [&] {
    return invokeOnCopies(entry, program, stage, args, Kept::device(),
                          Kept::mirror());
  });
}

void ober::rt::syncToHost(const std::vector<HostTensor> &tensors) {
  cuda::guarded("error", [&] { Kept::mirror().syncToHost(tensors); });
}

std::string ober::rt::startKernelProfile() {
  cuda::KernelProfile::enable(true);
  return "";
}

void ober::rt::printKernelProfile(int64_t rank, int64_t steps,
                                  double wallSeconds) {
  cuda::KernelProfile *profile = cuda::KernelProfile::current();
  if (!profile)
    return;
  profile->times().print(stderr, "rank " + std::to_string(rank) +
                                     ": GPU time by kernel over " +
                                     std::to_string(steps) + " step(s)",
                         steps, wallSeconds);
  cuda::KernelProfile::enable(false);
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
