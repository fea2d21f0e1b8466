//===- HostTarget.cpp - programs whose buffers are host memory ------------===//
//
// Part of Ober-Train's runtime (no MLIR). The CPU target's half of
// Target.h: the program reads and writes the executable's buffers where
// they are, and the kernel library (oneDNN) runs on this process's
// threads.
//
// With OBER_RT_COPY_ARGUMENTS=1 in the environment, a step runs as on a
// device target instead (invokeOnCopies): on copies of its arguments in
// buffers of its own, the parameters and optimizer state kept there
// between steps and brought back only where the training loop syncs the
// host. The results are the same; the tests use it to check those rules
// and sync points on real programs without a GPU.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "Target.h"

#include "ober/Runtime/CPUKernels.h"

#include <cstdlib>
#include <cstring>

using namespace ober::rt;

namespace {

bool copyArguments() {
  static const bool on = [] {
    const char *v = std::getenv("OBER_RT_COPY_ARGUMENTS");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

/// Host memory standing in for a device's: blocks apart from the host
/// tensors', allocated as generated code allocates (its results are freed
/// with std::free).
class SeparateMemory final : public DeviceMirror::Device {
public:
  void *allocate(size_t bytes) override { return allocateHostBlock(bytes); }
  void free(void *block) override { std::free(block); }
  void toDevice(void *device, const void *host, size_t bytes) override {
    std::memcpy(device, host, bytes);
  }
  void toHost(void *host, const void *device, size_t bytes) override {
    std::memcpy(host, device, bytes);
  }
  void finish() override {}
};

using Kept = ThreadMirror<SeparateMemory>;

} // namespace

void ober::rt::prepareProcess(const Program &) {}

bool ober::rt::prepareRank(const Program &program, const Placement &,
                           int threads, const std::string &self) {
  ober_rt_cpu_set_threads(threads);
  for (const ProgramKernel &k : program.kernels)
    if (ober_rt_cpu_prepare_kernel(k.name.c_str(), k.desc.data(),
                                   static_cast<int64_t>(k.desc.size()))) {
      reportError(self,
             "program manifest: kernel '" + k.name + "' with a descriptor of " +
                 std::to_string(k.desc.size()) +
                 " fields is not in this runtime (or names another "
                 "element type than the kernel's)",
             70);
      return false;
    }
  return true;
}

std::unique_ptr<Transport> ober::rt::programTransport(Transport &,
                                                      const Program &,
                                                      const Placement &) {
  return nullptr; // generated code's buffers are host memory
}

std::vector<HostTensor> ober::rt::invoke(Entry entry, const Program &program,
                                         int64_t stage,
                                         const std::vector<HostTensor> &args) {
  if (copyArguments())
    return invokeOnCopies(entry, program, stage, args, Kept::device(),
                          Kept::mirror());
  std::vector<std::vector<int64_t>> descriptors;
  for (const HostTensor &t : args)
    descriptors.push_back(t.descriptor());
  std::vector<int64_t> results =
      callEntry(entry, program, stage, descriptors);

  std::vector<HostTensor> out;
  size_t at = 0;
  for (const ProgramResult &r : program.results) {
    if (int64_t arg = r.inPlaceIn(stage); arg >= 0) { // in its buffer now
      out.push_back(args[arg]);
      continue;
    }
    auto *block = reinterpret_cast<void *>(results[at]);
    char *data = reinterpret_cast<char *>(results[at + 1]) +
                 results[at + 2] * dtypeSize(r.dtype);
    const HostTensor *owner = nullptr;
    for (const HostTensor &t : args)
      if (t.block() == block)
        owner = &t;
    for (const HostTensor &t : out)
      if (t.block() == block)
        owner = &t;
    out.push_back(owner ? HostTensor::share(*owner, r.dtype, r.shape, data)
                        : HostTensor::adopt(r.dtype, r.shape, block, data));
    at += 3 + 2 * r.shape.size();
  }
  return out;
}

void ober::rt::syncToHost(const std::vector<HostTensor> &tensors) {
  if (copyArguments())
    Kept::mirror().syncToHost(tensors);
}

double ober::rt::devicePeakBytes() { return -1; }

std::string ober::rt::startKernelProfile() {
  return "--profile-kernels times GPU kernels; this executable runs on the "
         "CPU (--timing gives its step times)";
}

void ober::rt::printKernelProfile(int64_t, int64_t, double) {}

void ober::rt::resetDevicePeak() {}
