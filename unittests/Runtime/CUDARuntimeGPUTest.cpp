//===- CUDARuntimeGPUTest.cpp - the CUDA runtime on a real GPU ------------===//
//
// Part of Ober-Train. Runs the CUDA runtime end to end on device 0: memory
// round trips, a PTX kernel through KernelModule and the mgpu* C ABI,
// event timing, cuBLASLt GEMMs against a CPU reference, and NCCL over a
// one-rank group. Prints a PASS or FAIL line per check; exits 1 when one
// failed and 77 (ctest's "skipped") without a CUDA device.
//
// `--image FILE` (repeatable) also loads a cubin or fatbin of the saxpy
// kernel below (ptxas -arch=sm_90 saxpy.ptx) and runs it.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/CuBLASLt.h"
#include "ober/Runtime/Devices/KernelProfile.h"
#include "ober/Runtime/Devices/Modules.h"
#include "ober/Runtime/Devices/NCCL.h"
#include "ober/Runtime/CUDAKernels.h"

#include "AttentionReference.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace ober::rt;
using namespace ober::rt::cuda;
namespace test = ober::rt::test;

namespace {
/// y = a * x + y over n floats, one thread per element.
const char kSaxpyPtx[] = R"(.version 7.0
.target sm_75
.address_size 64

.visible .entry saxpy(
  .param .u64 saxpy_x,
  .param .u64 saxpy_y,
  .param .f32 saxpy_a,
  .param .u32 saxpy_n
)
{
  .reg .pred %p<2>;
  .reg .f32 %f<5>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [saxpy_x];
  ld.param.u64 %rd2, [saxpy_y];
  ld.param.f32 %f1, [saxpy_a];
  ld.param.u32 %r1, [saxpy_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd7], %f4;
DONE:
  ret;
}
)";

constexpr unsigned kThreads = 256;
int failures = 0;

void report(const std::string &name, bool ok, const std::string &detail) {
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stdout);
  failures += !ok;
}

/// Runs a check returning an empty string on success or what went wrong.
void runCheck(const std::string &name, const std::function<std::string()> &f) {
  try {
    std::string problem = f();
    report(name, problem.empty(), problem);
  } catch (const std::exception &e) {
    report(name, false, e.what());
  }
}

std::vector<float> iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = scale * static_cast<float>(i % 1000);
  return v;
}

std::string memoryRoundTrip() {
  const size_t n = 1 << 20, bytes = n * sizeof(float);
  CachingAllocator &allocator = deviceAllocator(0);
  Stream stream;
  std::vector<float> host = iota(n, 0.5f), back(n);
  void *a = allocator.allocate(bytes, stream.get());
  void *b = allocator.allocate(bytes, stream.get());
  copyToDeviceAsync(a, host.data(), bytes, stream.get());
  copyDeviceAsync(b, a, bytes, stream.get());
  copyToHostAsync(back.data(), b, bytes, stream.get());
  stream.synchronize();
  if (back != host)
    return "host -> device -> device -> host changed the data";
  memset32Async(b, 0x3f800000u, n, stream.get()); // 1.0f
  copyToHostAsync(back.data(), b, bytes, stream.get());
  stream.synchronize();
  for (float v : back)
    if (v != 1.0f)
      return "memset32 of 1.0f gave " + std::to_string(v);
  std::vector<uint16_t> halves(n);
  memset16Async(a, 0xBEEF, n, stream.get());
  copyToHostAsync(halves.data(), a, n * 2, stream.get());
  stream.synchronize();
  for (uint16_t h : halves)
    if (h != 0xBEEF)
      return "memset16 gave " + std::to_string(h);
  allocator.free(a);
  allocator.free(b);
  allocator.retireStream(stream.get());
  return "";
}

/// Strided copies: rows a few bytes apart (cuMemcpy2D), and rows further
/// apart than cuMemcpy2D's largest pitch (a copy per row).
std::string stridedCopies() {
  CachingAllocator &allocator = deviceAllocator(0);
  Stream stream;
  const size_t width = 16, rows = 2;
  std::vector<char> want(width * rows), got(width * rows, 0);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = static_cast<char>(i + 1);
  for (size_t pitch : {size_t(48), (size_t(1) << 31) + 64}) {
    char *src = static_cast<char *>(
        allocator.allocate(pitch * (rows - 1) + width, stream.get()));
    void *dst = allocator.allocate(width * rows, stream.get());
    for (size_t r = 0; r < rows; ++r)
      copyToDeviceAsync(src + r * pitch, want.data() + r * width, width,
                        stream.get());
    copyRowsAsync(dst, width, src, pitch, width, rows, stream.get());
    copyToHostAsync(got.data(), dst, got.size(), stream.get());
    stream.synchronize();
    allocator.free(src);
    allocator.free(dst);
    if (got != want)
      return "rows " + std::to_string(pitch) + " bytes apart came back changed";
  }
  allocator.retireStream(stream.get());
  return "";
}

std::string outOfMemory() {
  try {
    deviceAllocator(0).allocate(size_t(4) << 40, nullptr); // 4 TiB
  } catch (const OutOfMemoryError &e) {
    std::string m = e.what();
    if (m.find("CUDA device 0") == std::string::npos ||
        m.find("total on the device") == std::string::npos)
      return "message lacks the device or its total: " + m;
    return "";
  }
  return "allocating 4 TiB succeeded";
}

/// Runs saxpy of `function` through the mgpu* ABI and checks y.
std::string runSaxpy(CUfunction function, bool cluster) {
  const unsigned n = 100000;
  const float a = 2.5f;
  std::vector<float> x = iota(n, 1.0f), y = iota(n, 0.25f), out(n);
  CUstream stream = mgpuStreamCreate();
  CUstream other = mgpuStreamCreate();
  void *dx = mgpuMemAlloc(n * 4, stream, false);
  void *dy = mgpuMemAlloc(n * 4, stream, false);
  mgpuMemcpy(dx, x.data(), n * 4, stream);
  mgpuMemcpy(dy, y.data(), n * 4, stream);
  void *params[] = {&dx, &dy, const_cast<float *>(&a),
                    const_cast<unsigned *>(&n)};
  intptr_t blocks = (n + kThreads - 1) / kThreads;
  if (cluster)
    mgpuLaunchClusterKernel(function, 1, 1, 1, blocks, 1, 1, kThreads, 1, 1, 0,
                            stream, params, nullptr);
  else
    mgpuLaunchKernel(function, blocks, 1, 1, kThreads, 1, 1, 0, stream, params,
                     nullptr, 4);
  // Read the result on another stream, ordered by an event.
  CUevent ready = mgpuEventCreate();
  mgpuEventRecord(ready, stream);
  mgpuStreamWaitEvent(other, ready);
  mgpuMemcpy(out.data(), dy, n * 4, other);
  mgpuMemFree(dx, other); // freed on another stream than its own
  mgpuMemFree(dy, other);
  mgpuStreamSynchronize(other);
  mgpuEventSynchronize(ready);
  mgpuEventDestroy(ready);
  mgpuStreamDestroy(stream);
  mgpuStreamDestroy(other);
  for (unsigned i = 0; i < n; ++i)
    if (out[i] != std::fma(a, x[i], y[i]))
      return "y[" + std::to_string(i) + "] = " + std::to_string(out[i]) +
             ", expected " + std::to_string(std::fma(a, x[i], y[i]));
  return "";
}

std::string mgpuMemsets() {
  const size_t n = 4096;
  CUstream stream = mgpuStreamCreate();
  void *d = mgpuMemAlloc(n * 4, stream, false);
  std::vector<uint32_t> words(n);
  mgpuMemset32(d, 0xA5A5A5A5u, n, stream);
  mgpuMemcpy(words.data(), d, n * 4, stream);
  mgpuStreamSynchronize(stream);
  for (uint32_t w : words)
    if (w != 0xA5A5A5A5u)
      return "mgpuMemset32";
  std::vector<uint16_t> halves(n);
  mgpuMemset16(d, 0x1234, n, stream);
  mgpuMemcpy(halves.data(), d, n * 2, stream);
  mgpuStreamSynchronize(stream);
  for (uint16_t h : halves)
    if (h != 0x1234)
      return "mgpuMemset16";
  mgpuMemFree(d, stream);
  mgpuStreamDestroy(stream);
  return "";
}

/// Host-shared (managed) memory through mgpuMemAlloc.
std::string managedMemory() {
  CUstream stream = mgpuStreamCreate();
  auto *shared = static_cast<uint32_t *>(mgpuMemAlloc(1024, stream, true));
  shared[0] = 7; // host-accessible
  mgpuMemset32(shared + 1, 9, 1, stream);
  mgpuStreamSynchronize(stream);
  bool ok = shared[0] == 7 && shared[1] == 9;
  mgpuMemFree(shared, stream);
  mgpuStreamDestroy(stream);
  return ok ? "" : "managed memory did not hold its values";
}

std::string eventTiming(CUfunction function) {
  const unsigned n = 1 << 20;
  const float a = 1.0f;
  CachingAllocator &allocator = deviceAllocator(0);
  Stream stream;
  void *x = allocator.allocate(n * 4, stream.get());
  void *y = allocator.allocate(n * 4, stream.get());
  memset32Async(x, 0, n, stream.get());
  memset32Async(y, 0, n, stream.get());
  void *params[] = {&x, &y, const_cast<float *>(&a),
                    const_cast<unsigned *>(&n)};
  Event start, stop;
  start.record(stream.get());
  for (int i = 0; i < 100; ++i)
    cuda::check(driver().cuLaunchKernel(function, n / kThreads, 1, 1, kThreads,
                                        1, 1, 0, stream.get(), params, nullptr),
                "cuLaunchKernel");
  stop.record(stream.get());
  stop.synchronize();
  float ms = stop.elapsedMsSince(start);
  allocator.free(x);
  allocator.free(y);
  allocator.retireStream(stream.get());
  std::printf("  100 saxpy launches over 4 MiB: %.3f ms\n", ms);
  return ms > 0 && ms < 1000 && stop.done() ? ""
                                            : "elapsed " + std::to_string(ms);
}

std::string kernels(const std::vector<std::string> &images) {
  KernelModule module(kSaxpyPtx, std::strlen(kSaxpyPtx));
  CUfunction saxpy = module.getFunction("saxpy");
  if (saxpy != module.getFunction("saxpy"))
    return "a second lookup gave another function";
  try {
    module.getFunction("nope");
    return "a missing kernel was found";
  } catch (const CudaError &e) {
    if (std::string(e.what()).find("kernel 'nope' not found") ==
        std::string::npos)
      return std::string("unhelpful error: ") + e.what();
  }
  if (std::string problem = runSaxpy(saxpy, false); !problem.empty())
    return "KernelModule: " + problem;
  // A rank loads every module before its first collective, skipping code
  // the device cannot run (it fails when launched).
  static const char broken[] = ".version 99.0\n.target sm_999\n";
  KernelModule waiting(kSaxpyPtx, std::strlen(kSaxpyPtx)),
      unusable(broken, sizeof(broken));
  KernelModule::loadAllHere();
  if (!waiting.loaded() || unusable.loaded())
    return "loadAllHere loaded the wrong modules";
  void *jit = mgpuModuleLoadJIT(const_cast<char *>(kSaxpyPtx), 3);
  CUfunction viaAbi = mgpuModuleGetFunction(jit, "saxpy");
  if (std::string problem = runSaxpy(viaAbi, false); !problem.empty())
    return "mgpuModuleLoadJIT: " + problem;
  mgpuModuleUnload(jit);
  for (const std::string &path : images) {
    std::ifstream in(path, std::ios::binary);
    auto *bytes = new std::vector<char>(std::istreambuf_iterator<char>(in),
                                        {}); // outlives the module
    void *m = mgpuModuleLoad(bytes->data(), bytes->size());
    std::printf(
        "  %s: %s\n", path.c_str(),
        imageFormatName(detectImageFormat(bytes->data(), bytes->size())));
    if (std::string problem =
            runSaxpy(mgpuModuleGetFunction(m, "saxpy"), false);
        !problem.empty())
      return path + ": " + problem;
  }
  if (std::string problem = mgpuMemsets(); !problem.empty())
    return problem;
  return eventTiming(saxpy);
}

//===----------------------------------------------------------------------===//
// GEMMs against a CPU reference
//===----------------------------------------------------------------------===//

/// Random values of `type`, as floats (already rounded to the type).
std::vector<float> randomOf(DType type, size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> v(n);
  char cell[8];
  for (float &x : v) {
    storeFloat(type, cell, uniform(rng));
    x = static_cast<float>(loadFloat(type, cell));
  }
  return v;
}

std::vector<char> encode(DType type, const std::vector<float> &v) {
  size_t size = dtypeSize(type);
  std::vector<char> bytes(v.size() * size);
  for (size_t i = 0; i < v.size(); ++i)
    storeFloat(type, bytes.data() + i * size, v[i]);
  return bytes;
}

/// The row-major reference of every batch of `d`.
std::vector<double> reference(const GemmDesc &d, const std::vector<float> &a,
                              const std::vector<float> &b,
                              const std::vector<float> &c0) {
  std::vector<double> c(c0.size());
  for (int64_t p = 0; p < d.batch; ++p)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < d.k; ++l) {
          double x = a[p * d.m * d.k + (d.transA ? l * d.m + i : i * d.k + l)];
          double y = b[p * d.k * d.n + (d.transB ? j * d.k + l : l * d.n + j)];
          sum += x * y;
        }
        size_t at = p * d.m * d.n + i * d.n + j;
        c[at] = d.alpha * sum + d.beta * c0[at];
      }
  return c;
}

/// `d` on random data against the host's product; each matrix starts
/// `offset` elements into its allocation (alignments cuBLASLt's default
/// plan does not assume).
std::string gemmCase(GemmDesc d, double tolerance, size_t offset = 0) {
  std::mt19937 rng(42);
  size_t na = d.batch * d.m * d.k, nb = d.batch * d.k * d.n,
         nc = d.batch * d.m * d.n;
  std::vector<float> a = randomOf(d.a, na, rng), b = randomOf(d.b, nb, rng),
                     c0 = randomOf(d.c, nc, rng);
  std::vector<char> ha = encode(d.a, a), hb = encode(d.b, b),
                    hc = encode(d.c, c0);
  CachingAllocator &allocator = deviceAllocator(0);
  Stream stream;
  void *blocks[3];
  char *ptrs[3];
  const std::vector<char> *hosts[3] = {&ha, &hb, &hc};
  DType types[3] = {d.a, d.b, d.c};
  for (int i = 0; i < 3; ++i) {
    size_t skip = offset * dtypeSize(types[i]);
    blocks[i] = allocator.allocate(hosts[i]->size() + skip, stream.get());
    ptrs[i] = static_cast<char *>(blocks[i]) + skip;
    copyToDeviceAsync(ptrs[i], hosts[i]->data(), hosts[i]->size(),
                      stream.get());
  }
  gemm(d, ptrs[0], ptrs[1], ptrs[2], stream.get());
  copyToHostAsync(hc.data(), ptrs[2], hc.size(), stream.get());
  stream.synchronize();
  for (void *p : blocks)
    allocator.free(p);
  allocator.retireStream(stream.get());
  std::vector<double> want = reference(d, a, b, c0);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < nc; ++i) {
    double got = loadFloat(d.c, hc.data() + i * dtypeSize(d.c));
    worst = std::max(worst, std::fabs(got - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  double relative = worst / scale;
  char text[96];
  std::snprintf(text, sizeof(text), "max error %.2e of max |C| (limit %.0e)",
                relative, tolerance);
  return relative <= tolerance ? "" : text;
}

//===----------------------------------------------------------------------===//
// The flash attention kernels against the double reference
//===----------------------------------------------------------------------===//

/// A rank-1 memref descriptor (allocated, aligned, offset, size, stride).
struct Memref1 {
  ober_rt_memref base;
  int64_t size, stride;
};

ober_rt_buffer bufferOf(Memref1 &m, void *p, int64_t n) {
  m = {{p, p, 0}, n, 1};
  return {1, &m.base};
}

/// Forward and backward through the C entry points on random data, against
/// the reference; with `timed` (sizes too large for the reference), only
/// the milliseconds of each pass instead, printed with TFLOP/s.
std::string flashCase(DType type, test::AttentionSizes s, double tolerance,
                      bool timed = false) {
  std::mt19937 rng(7);
  size_t nq = s.batch * s.lq, nk = s.batch * s.lk;
  std::vector<float> q = randomOf(type, nq * s.d, rng),
                     k = randomOf(type, nk * s.d, rng),
                     v = randomOf(type, nk * s.dv, rng),
                     g = randomOf(type, nq * s.dv, rng);
  auto doubles = [](const std::vector<float> &x) {
    return std::vector<double>(x.begin(), x.end());
  };
  auto round = [type](double x) {
    char cell[8];
    storeFloat(type, cell, x);
    return loadFloat(type, cell);
  };
  test::AttentionResults want;
  if (timed) {
    want.o.resize(nq * s.dv);
    want.dq.resize(nq * s.d);
    want.dk.resize(nk * s.d);
    want.dv.resize(nk * s.dv);
  } else {
    want = test::attentionReference(s, doubles(q), doubles(k), doubles(v),
                                    doubles(g), round);
  }
  std::vector<float> o(want.o.begin(), want.o.end());
  const std::vector<float> *inputs[5] = {&q, &k, &v, &o, &g};
  size_t sizes[8] = {q.size(), k.size(), v.size(), o.size(), g.size(),
                     want.dq.size(), want.dk.size(), want.dv.size()};
  CUstream stream = programStream();
  CachingAllocator &allocator = deviceAllocator(0);
  size_t bytes = dtypeSize(type);
  void *device[8] = {};
  Memref1 memrefs[9];
  ober_rt_buffer buffers[9];
  for (int i = 0; i < 8; ++i) {
    device[i] = allocator.allocate(sizes[i] * bytes, stream);
    buffers[i + 1] = bufferOf(memrefs[i + 1], device[i], int64_t(sizes[i]));
    if (i < 5) {
      std::vector<char> host = encode(type, *inputs[i]);
      copyToDeviceAsync(device[i], host.data(), host.size(), stream);
    }
  }
  int64_t fields[OBER_ATTENTION_FIELDS] = {s.batch, s.lq, s.lk, s.d, s.dv,
                                           s.causal, 0, int64_t(type)};
  std::memcpy(&fields[OBER_ATTENTION_SCALE_BITS], &s.scale, sizeof(double));
  buffers[0] = bufferOf(memrefs[0], fields, OBER_ATTENTION_FIELDS);
  bool bf16 = type == DType::BF16;
  auto forward = bf16 ? _mlir_ciface_ober_rt_cuda_attention_bf16
                      : _mlir_ciface_ober_rt_cuda_attention_f16;
  auto backward = bf16 ? _mlir_ciface_ober_rt_cuda_attention_grad_bf16
                       : _mlir_ciface_ober_rt_cuda_attention_grad_f16;
  Memref1 outMemref;
  std::vector<char> outHost(sizes[3] * bytes);
  void *out = allocator.allocate(outHost.size(), stream);
  ober_rt_buffer outBuffer = bufferOf(outMemref, out, int64_t(sizes[3]));
  Event start, afterForward, end;
  start.record(stream);
  forward(&buffers[0], &buffers[1], &buffers[2], &buffers[3], &outBuffer);
  afterForward.record(stream);
  backward(&buffers[0], &buffers[1], &buffers[2], &buffers[3], &buffers[4],
           &buffers[5], &buffers[6], &buffers[7], &buffers[8]);
  end.record(stream);
  std::vector<std::vector<char>> results(4);
  void *from[4] = {out, device[5], device[6], device[7]};
  size_t counts[4] = {sizes[3], sizes[5], sizes[6], sizes[7]};
  for (int i = 0; i < 4; ++i) {
    results[i].resize(counts[i] * bytes);
    copyToHostAsync(results[i].data(), from[i], results[i].size(), stream);
  }
  check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  if (timed) {
    double causal = s.causal ? 0.5 : 1, pairs = double(s.batch) * s.lq * s.lk;
    double fwdFlops = 2 * pairs * (s.d + s.dv) * causal,
           bwdFlops = 2 * pairs * (3 * s.d + 2 * s.dv) * causal;
    float fms = afterForward.elapsedMsSince(start),
          bms = end.elapsedMsSince(afterForward);
    std::printf("flash attention %s, %lld x %lld x %lld, head %lld%s: "
                "forward %.3f ms (%.1f TFLOP/s), backward %.3f ms "
                "(%.1f TFLOP/s, the model's FLOPs)\n",
                dtypeName(type), (long long)s.batch, (long long)s.lq,
                (long long)s.lk, (long long)s.d, s.causal ? " causal" : "",
                fms, fwdFlops / fms / 1e9, bms, bwdFlops / bms / 1e9);
  }
  for (void *p : device)
    allocator.free(p);
  allocator.free(out);
  if (timed)
    return "";
  const std::vector<double> *wants[4] = {&want.o, &want.dq, &want.dk, &want.dv};
  const char *names[4] = {"output", "dq", "dk", "dv"};
  std::string failed;
  for (int i = 0; i < 4; ++i) {
    std::vector<double> got(counts[i]);
    for (size_t e = 0; e < counts[i]; ++e)
      got[e] = loadFloat(type, results[i].data() + e * bytes);
    double err = test::relativeError(got, *wants[i]);
    if (err > tolerance) {
      char text[96];
      std::snprintf(text, sizeof(text), "%s off by %.2e of its largest; ",
                    names[i], err);
      failed += text;
    }
  }
  return failed;
}

void flashAttention() {
  auto sizes = [](int64_t b, int64_t lq, int64_t lk, int64_t d, int64_t dv,
                  bool causal) {
    return test::AttentionSizes{b, lq, lk, d, dv, causal, 1 / std::sqrt(double(d))};
  };
  runCheck("flash attention bf16 causal 2x200x200 head 64", [&] {
    return flashCase(DType::BF16, sizes(2, 200, 200, 64, 64, true), 2e-2);
  });
  runCheck("flash attention bf16 45x130 heads 24/40", [&] {
    return flashCase(DType::BF16, sizes(3, 45, 130, 24, 40, false), 2e-2);
  });
  runCheck("flash attention f16 causal 130x70 head 128", [&] {
    return flashCase(DType::F16, sizes(1, 130, 70, 128, 128, true), 4e-3);
  });
  // The 1.3B GPT's attention for 2 samples (16 heads, sequence 2048, head
  // 128).
  runCheck("flash attention timing", [&] {
    return flashCase(DType::BF16, sizes(32, 2048, 2048, 128, 128, true), 0,
                     /*timed=*/true);
  });
}

void gemms() {
  const int64_t m = 96, n = 64, k = 128;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      GemmDesc d = gemmDescFor(GemmPrecision::BF16, m, n, k, ta, tb);
      runCheck(std::string("gemm bf16") + (ta ? " A^T" : "") +
                   (tb ? " B^T" : ""),
               [=] { return gemmCase(d, 2e-2); });
    }
  GemmDesc f16 = gemmDescFor(GemmPrecision::F16, m, n, k, true, false);
  f16.c = DType::F32;
  runCheck("gemm f16 -> f32 A^T", [=] { return gemmCase(f16, 2e-2); });
  GemmDesc f32 = gemmDescFor(GemmPrecision::F32, m, n, k, false, true);
  f32.alpha = 0.5f;
  f32.beta = 1.0f;
  runCheck("gemm f32 alpha=0.5 beta=1 B^T",
           [=] { return gemmCase(f32, 1e-4); });
  GemmDesc tf32 = gemmDescFor(GemmPrecision::TF32, m, n, k);
  runCheck("gemm tf32", [=] { return gemmCase(tf32, 1e-2); });
  GemmDesc batched = gemmDescFor(GemmPrecision::BF16, m, n, k, false, true);
  batched.batch = 3;
  runCheck("gemm bf16 strided batch of 3",
           [=] { return gemmCase(batched, 2e-2); });
  // Odd shapes in a batch, one element off every allocation: matrices on
  // 2-byte boundaries (a product of a program's bf16 views).
  GemmDesc odd = gemmDescFor(GemmPrecision::BF16, 5, 7, 9, true, false);
  odd.batch = 3;
  runCheck("gemm bf16 batch of 3, 5x7x9, 2-byte aligned",
           [=] { return gemmCase(odd, 2e-2, /*offset=*/1); });
  runCheck("measureGemm bf16 2048^3", [] {
    double flops = measureGemm(GemmPrecision::BF16, 2048, 2048, 2048, false, 5);
    std::printf("  bf16 2048^3: %.1f TFLOP/s\n", flops / 1e12);
    return flops > 1e12 ? "" : "under 1 TFLOP/s";
  });
}

//===----------------------------------------------------------------------===//
// NCCL over a one-rank group
//===----------------------------------------------------------------------===//

std::string ncclOneRank() {
  auto hub = makeThreadHub(1, 60);
  auto bootstrap = threadTransport(hub, 0);
  NcclTransport transport(*bootstrap, 0);
  transport.createGroups({GroupSpec{{0}, 0}});
  const int64_t n = 1 << 16;
  CachingAllocator &allocator = deviceAllocator(0);
  std::vector<float> host = iota(n, 0.125f), back(n);
  void *in = allocator.allocate(n * 4, transport.stream());
  void *out = allocator.allocate(n * 4, transport.stream());
  copyToDevice(in, host.data(), n * 4);
  transport.allReduce(0, in, out, n, DType::F32, OBER_REDUCE_SUM);
  copyToHost(back.data(), out, n * 4);
  if (back != host)
    return "one-rank all-reduce changed the data";
  memset32Async(out, 0, n, transport.stream());
  transport.allGather(0, in, out, n * 4);
  copyToHost(back.data(), out, n * 4);
  if (back != host)
    return "one-rank all-gather changed the data";
  // Overlap: a compute stream waits for an enqueued all-reduce.
  Stream compute;
  Event ready(false), done(false);
  memset32Async(out, 0, n, compute.get());
  ready.record(compute.get());
  transport.enqueueAllReduce(0, in, out, n, DType::F32, OBER_REDUCE_MAX, done,
                             &ready);
  compute.waitFor(done);
  copyToHostAsync(back.data(), out, n * 4, compute.get());
  compute.synchronize();
  allocator.free(in);
  allocator.free(out);
  if (back != host)
    return "enqueued all-reduce changed the data";
  std::printf("  NCCL %d\n", ncclVersion());
  return "";
}
} // namespace

int main(int argc, char **argv) {
  try {
    driver();
  } catch (const CudaError &e) {
    std::printf("%s\n", e.what());
    bool noDevice = std::strncmp(e.what(), kNoDevice, strlen(kNoDevice)) == 0;
    return noDevice ? 77 : 1;
  }
  std::vector<std::string> images;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--image")
      images.push_back(argv[i + 1]);
  const DeviceInfo &info = sharedDevice(0).info();
  std::printf("device 0: %s, sm_%d%d, %d multiprocessors, %.1f GiB\n",
              info.name.c_str(), info.computeMajor, info.computeMinor,
              info.multiprocessors, info.totalMemory / double(1 << 30));
  runCheck("memory round trip", memoryRoundTrip);
  runCheck("strided copies", stridedCopies);
  runCheck("out of memory", outOfMemory);
  runCheck("kernels", [&] { return kernels(images); });
  gemms();
  runCheck("kernel profile", [] {
    // A launch (named as it was looked up) and a cuBLASLt call, timed.
    KernelProfile::enable(true);
    KernelModule module(kSaxpyPtx, std::strlen(kSaxpyPtx));
    std::string saxpy = runSaxpy(module.getFunction("saxpy"), false);
    std::string gemmed =
        gemmCase(gemmDescFor(GemmPrecision::BF16, 64, 64, 64), 2e-2);
    std::vector<KernelTimes::Row> rows = KernelProfile::current()->times().rows();
    KernelProfile::enable(false);
    if (!saxpy.empty() || !gemmed.empty())
      return saxpy + gemmed;
    bool kernel = false, library = false;
    for (const KernelTimes::Row &r : rows) {
      kernel |= r.name == "saxpy" && r.calls == 1 && r.milliseconds > 0;
      library |= r.name.rfind("cuBLASLt bf16 GEMM M=64", 0) == 0 &&
                 r.milliseconds > 0;
    }
    return kernel && library ? "" : std::string("saxpy or the GEMM not timed");
  });
  runCheck("nccl one rank", ncclOneRank);
  flashAttention();
  // Last: a failing mgpu* call ends the process.
  runCheck("managed memory", managedMemory);
  if (info.computeMajor >= 9)
    runCheck("cluster launch", [] {
      KernelModule module(kSaxpyPtx, std::strlen(kSaxpyPtx));
      return runSaxpy(module.getFunction("saxpy"), true);
    });
  AllocatorStats s = deviceAllocator(0).stats();
  std::printf("allocator: %zu driver allocations, peak %.1f MiB in use, "
              "%.1f MiB reserved\n",
              s.driverAllocations, s.peakInUse / 1048576.0,
              s.reserved / 1048576.0);
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
