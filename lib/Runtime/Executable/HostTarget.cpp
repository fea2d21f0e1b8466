//===- HostTarget.cpp - programs whose buffers are host memory ------------===//
//
// Part of Ober-Train's runtime (no MLIR). The CPU target's half of
// Target.h: the program reads and writes the executable's buffers where
// they are, and the kernel library (oneDNN) runs on this process's
// threads.
//
//===----------------------------------------------------------------------===//

#include "Run.h"
#include "Target.h"

#include "ober/Runtime/CPUKernels.h"

using namespace ober::rt;

bool ober::rt::prepareRank(const Program &program, int threads,
                           const std::string &self) {
  ober_rt_cpu_set_threads(threads);
  for (const ProgramKernel &k : program.kernels)
    if (ober_rt_cpu_prepare_kernel(k.name.c_str(), k.desc.data(),
                                   static_cast<int64_t>(k.desc.size()))) {
      reportError(self,
             "program manifest: kernel '" + k.name + "' with a descriptor of " +
                 std::to_string(k.desc.size()) +
                 " fields is not in this runtime",
             70);
      return false;
    }
  return true;
}

std::vector<HostTensor> ober::rt::invoke(Entry entry, const Program &program,
                                         int64_t stage,
                                         const std::vector<HostTensor> &args) {
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

double ober::rt::devicePeakBytes() { return -1; }

void ober::rt::resetDevicePeak() {}
