//===- GemmBenchmark.cpp - GEMM throughput of the current device ----------===//
//
// Part of Ober-Train's runtime (no MLIR). Operands are filled once with
// pseudo-random values (tensor cores draw less power on zeros and run
// faster than on real data) and grow as larger shapes are measured, so a
// sweep over a grid of shapes fills each operand buffer about once.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/CuBLASLt.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {
/// The random pattern repeated over an operand, bytes.
constexpr size_t kPatternBytes = size_t(1) << 20;
/// Runs before timing: the first makes the plan, the rest warm the clocks.
constexpr int kWarmupRuns = 3;

/// kPatternBytes of values uniform in [-1, 1) of `type` (xorshift).
const std::vector<char> &pattern(DType type) {
  static std::mutex mutex;
  static std::map<DType, std::vector<char>> patterns;
  std::lock_guard<std::mutex> lock(mutex);
  std::vector<char> &bytes = patterns[type];
  if (bytes.empty()) {
    bytes.resize(kPatternBytes);
    size_t size = dtypeSize(type);
    uint64_t state = 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(type);
    for (size_t at = 0; at + size <= bytes.size(); at += size) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      double u = static_cast<double>(state >> 11) / double(uint64_t(1) << 53);
      storeFloat(type, bytes.data() + at, 2 * u - 1);
    }
  }
  return bytes;
}

/// Fills `bytes` at `device` with the pattern: one upload, then copies of
/// what is already filled, doubling.
void fillPseudoRandom(void *device, size_t bytes, DType type, CUstream stream) {
  const std::vector<char> &p = pattern(type);
  char *out = static_cast<char *>(device);
  size_t filled = std::min(bytes, p.size());
  copyToDeviceAsync(out, p.data(), filled, stream);
  while (filled < bytes) {
    size_t chunk = std::min(filled, bytes - filled);
    copyDeviceAsync(out + filled, out, chunk, stream);
    filled += chunk;
  }
}

/// An operand buffer kept between measurements (per device, type, role).
struct Operand {
  void *memory = nullptr;
  size_t bytes = 0;
};

void *operand(int device, DType type, int role, size_t bytes, bool fill,
              CUstream stream) {
  static std::mutex mutex;
  static std::map<std::tuple<int, DType, int>, Operand> operands;
  std::lock_guard<std::mutex> lock(mutex);
  Operand &o = operands[{device, type, role}];
  if (o.bytes >= bytes)
    return o.memory;
  CachingAllocator &allocator = deviceAllocator(device);
  allocator.free(o.memory);
  o.memory = allocator.allocate(bytes, /*stream=*/nullptr);
  o.bytes = bytes;
  if (fill)
    fillPseudoRandom(o.memory, bytes, type, stream);
  return o.memory;
}
} // namespace

double ober::rt::cuda::measureGemm(GemmPrecision precision, int64_t m,
                                   int64_t n, int64_t k, bool transposedA,
                                   int iterations) {
  GemmDesc d = gemmDescFor(precision, m, n, k, transposedA);
  int device = currentDevice();
  Stream stream;
  size_t element = dtypeSize(d.a);
  void *a = operand(device, d.a, 0, m * k * element, true, stream.get());
  void *b = operand(device, d.b, 1, k * n * element, true, stream.get());
  void *c =
      operand(device, d.c, 2, m * n * dtypeSize(d.c), false, stream.get());
  for (int i = 0; i < kWarmupRuns; ++i)
    gemm(d, a, b, c, stream.get());
  Event start, stop;
  start.record(stream.get());
  for (int i = 0; i < std::max(iterations, 1); ++i)
    gemm(d, a, b, c, stream.get());
  stop.record(stream.get());
  stop.synchronize();
  // The stream ends here: its cached workspace must serve later streams.
  deviceAllocator(device).retireStream(stream.get());
  double seconds = stop.elapsedMsSince(start) * 1e-3;
  return 2.0 * m * n * k * std::max(iterations, 1) / seconds;
}
