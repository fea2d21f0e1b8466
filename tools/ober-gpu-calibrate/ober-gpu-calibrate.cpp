//===- ober-gpu-calibrate.cpp - measure a GPU for the planner -------------===//
//
// Part of Ober-Train (no MLIR). Measures, on one CUDA device: GEMM
// throughput of bf16, f16 and tf32 over a grid of shapes (and with A
// transposed), device memory bandwidth by size, kernel launch overhead and,
// with more than one GPU, NCCL all-reduce bus bandwidth. Writes a cluster
// file the planner reads: a base preset chosen from the device's name with
// the measured fields overriding it.
//
//   ober-gpu-calibrate [-o FILE] [--quick] [--device N]
//
// Without -o the JSON goes to stdout and the summary to stderr. Without a
// GPU it prints the "no CUDA device: ..." reason and exits 1.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/CuBLASLt.h"
#include "ober/Runtime/Devices/Modules.h"
#include "ober/Runtime/Devices/NCCL.h"
#include "ober/Runtime/LaunchEnv.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {
/// FLOPs one GEMM measurement aims for (about 5 ms on an H100 in bf16).
constexpr double kTargetFlop = 4e12;
/// Bytes each bandwidth measurement copies in all.
constexpr double kTargetCopyBytes = 8.0 * (1 << 30);
constexpr size_t kMinCopy = size_t(1) << 20, kMaxCopy = size_t(1) << 30;
/// Empty kernels launched to time one launch.
constexpr int kLaunches = 20000;

const char kEmptyKernelPtx[] = ".version 7.0\n.target sm_75\n"
                               ".address_size 64\n"
                               ".visible .entry ober_empty()\n{\n  ret;\n}\n";

struct Options {
  std::string output;
  bool quick = false;
  int device = 0;
};

struct GemmGrid {
  std::vector<int64_t> sizes;
  /// FLOP/s by precision name: plain, then with A transposed; m-major.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>
      flops;
};

struct Results {
  std::string deviceName, preset;
  double datasheetBf16 = 0;
  GemmGrid gemm;
  std::vector<double> copyBytes, bandwidth;
  double launchOverhead = 0;
};

/// The closest preset of the planner and its dense bf16 datasheet peak.
std::pair<std::string, double> presetFor(const std::string &name) {
  if (name.find("H200") != std::string::npos)
    return {"h200-sxm", 989e12};
  if (name.find("A100") != std::string::npos)
    return {"a100-80gb", 312e12};
  return {"h100-sxm", 989e12};
}

int usage(const char *problem) {
  std::fprintf(stderr,
               "ober-gpu-calibrate: %s\nusage: ober-gpu-calibrate [-o FILE] "
               "[--quick] [--device N]\n",
               problem);
  return OBER_RT_EXIT_USAGE;
}

bool parse(int argc, char **argv, Options &options, std::string &problem) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "-o" && hasValue) {
      options.output = argv[++i];
    } else if (arg == "--quick") {
      options.quick = true;
    } else if (arg == "--device" && hasValue) {
      char *end = nullptr;
      long n = std::strtol(argv[++i], &end, 10);
      if (*end || n < 0 || n > 1024) {
        problem = std::string("--device takes a device ordinal, not '") +
                  argv[i] + "'";
        return false;
      }
      options.device = static_cast<int>(n);
    } else {
      problem = "unknown or incomplete argument '" + arg + "'";
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Measurements
//===----------------------------------------------------------------------===//

int iterationsFor(double work, double target, int low, int high) {
  return static_cast<int>(std::clamp(target / work, double(low), double(high)));
}

std::vector<double> gemmSweep(GemmPrecision precision,
                              const std::vector<int64_t> &sizes,
                              bool transposedA) {
  std::vector<double> flops;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : sizes) {
        double work = 2.0 * m * n * k;
        flops.push_back(measureGemm(precision, m, n, k, transposedA,
                                    iterationsFor(work, kTargetFlop, 3, 200)));
      }
  return flops;
}

GemmGrid measureGemms(bool quick) {
  GemmGrid grid;
  grid.sizes = quick ? std::vector<int64_t>{512, 4096}
                     : std::vector<int64_t>{128, 512, 2048, 8192};
  for (GemmPrecision p :
       {GemmPrecision::BF16, GemmPrecision::F16, GemmPrecision::TF32})
    grid.flops[gemmPrecisionName(p)] = {gemmSweep(p, grid.sizes, false),
                                        gemmSweep(p, grid.sizes, true)};
  return grid;
}

/// Device-to-device copies from 1 MiB to 1 GiB; bandwidth counts the bytes
/// read and written (what a kernel moving that much data moves).
void measureBandwidth(int device, Results &r) {
  CachingAllocator &allocator = deviceAllocator(device);
  Stream stream;
  void *from = allocator.allocate(kMaxCopy, stream.get());
  void *to = allocator.allocate(kMaxCopy, stream.get());
  memset8Async(from, 1, kMaxCopy, stream.get());
  for (size_t bytes = kMinCopy; bytes <= kMaxCopy; bytes *= 2) {
    int iterations = iterationsFor(double(bytes), kTargetCopyBytes, 5, 500);
    for (int i = 0; i < 2; ++i)
      copyDeviceAsync(to, from, bytes, stream.get());
    Event start, stop;
    start.record(stream.get());
    for (int i = 0; i < iterations; ++i)
      copyDeviceAsync(to, from, bytes, stream.get());
    stop.record(stream.get());
    stop.synchronize();
    double seconds = stop.elapsedMsSince(start) * 1e-3;
    r.copyBytes.push_back(2.0 * bytes);
    r.bandwidth.push_back(2.0 * bytes * iterations / seconds);
  }
  allocator.free(from);
  allocator.free(to);
  allocator.retireStream(stream.get());
}

/// Seconds per launch of an empty kernel, launches back to back: the host
/// enqueue cost or the device's per-kernel time, whichever limits.
double measureLaunchOverhead() {
  KernelModule module(kEmptyKernelPtx, sizeof(kEmptyKernelPtx) - 1);
  CUfunction empty = module.getFunction("ober_empty");
  Stream stream;
  const DriverApi &d = driver();
  auto launch = [&](int count) {
    for (int i = 0; i < count; ++i)
      check(d.cuLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream.get(), nullptr,
                             nullptr),
            "cuLaunchKernel (empty kernel)");
    stream.synchronize();
  };
  launch(kLaunches / 10);
  auto start = std::chrono::steady_clock::now();
  launch(kLaunches);
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / kLaunches;
}

/// All-reduce bus bandwidth over every GPU (one thread each), printed.
void measureAllReduce(int devices, std::FILE *log) {
  auto hub = makeThreadHub(devices, 120);
  std::vector<std::thread> ranks;
  std::vector<std::string> lines(devices);
  for (int r = 0; r < devices; ++r)
    ranks.emplace_back([&, r] {
      try {
        auto bootstrap = threadTransport(hub, r);
        NcclTransport nccl(*bootstrap, r);
        std::vector<int64_t> all;
        for (int i = 0; i < devices; ++i)
          all.push_back(i);
        nccl.createGroups({GroupSpec{all, 0}});
        CachingAllocator &allocator = deviceAllocator(r);
        for (size_t bytes :
             {size_t(1) << 20, size_t(64) << 20, size_t(512) << 20}) {
          void *data = allocator.allocate(bytes, nccl.stream());
          int64_t count = static_cast<int64_t>(bytes / 4);
          nccl.allReduce(0, data, data, count, DType::F32, OBER_REDUCE_SUM);
          const int iterations = 10;
          auto start = std::chrono::steady_clock::now();
          for (int i = 0; i < iterations; ++i)
            nccl.allReduce(0, data, data, count, DType::F32, OBER_REDUCE_SUM);
          std::chrono::duration<double> t =
              std::chrono::steady_clock::now() - start;
          double bus =
              bytes * iterations / t.count() * 2 * (devices - 1) / devices;
          lines[r] += "  all-reduce " + std::to_string(bytes >> 20) +
                      " MiB over " + std::to_string(devices) +
                      " GPUs: " + std::to_string(bus / 1e9) +
                      " GB/s bus bandwidth\n";
          allocator.free(data);
        }
      } catch (const std::exception &e) {
        failThreadHub(*hub, e.what());
        lines[r] = std::string("  NCCL all-reduce failed: ") + e.what() + "\n";
      }
    });
  for (std::thread &t : ranks)
    t.join();
  std::fputs(lines[0].c_str(), log);
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", v);
  return text;
}

template <typename T> std::string array(const std::vector<T> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + number(static_cast<double>(values[i]));
  return out + "]";
}

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  return out + "\"";
}

std::string clusterJson(const Results &r) {
  std::ostringstream o;
  o << "{\n  \"preset\": " << quoted(r.preset)
    << ",\n  \"name\": " << quoted("measured-" + r.deviceName)
    << ",\n  \"device\": {\n"
    << "    \"name\": " << quoted(r.deviceName) << ",\n"
    << "    \"launch_overhead\": " << number(r.launchOverhead) << ",\n"
    << "    \"gemm\": {\n";
  std::string sizes = array(r.gemm.sizes);
  bool first = true;
  for (const char *type : {"bf16", "f16", "tf32"}) {
    const auto &[plain, transposed] = r.gemm.flops.at(type);
    o << (first ? "" : ",\n") << "      " << quoted(type)
      << ": {\"m\": " << sizes << ", \"n\": " << sizes << ", \"k\": " << sizes
      << ",\n        \"flops\": " << array(plain)
      << ",\n        \"flops_transposed_a\": " << array(transposed) << "}";
    first = false;
  }
  o << "\n    },\n    \"memory_bandwidth_by_size\": {\"bytes\": "
    << array(r.copyBytes) << ",\n      \"bandwidth\": " << array(r.bandwidth)
    << "}\n  }\n}\n";
  return o.str();
}

void summarize(const Results &r, const DeviceInfo &info, double seconds,
               std::FILE *log) {
  std::fprintf(log, "%s (sm_%d%d, %d SMs, %.1f GiB): preset %s\n",
               r.deviceName.c_str(), info.computeMajor, info.computeMinor,
               info.multiprocessors, info.totalMemory / double(1 << 30),
               r.preset.c_str());
  for (const char *type : {"bf16", "f16", "tf32"}) {
    const auto &[plain, transposed] = r.gemm.flops.at(type);
    double peak = *std::max_element(plain.begin(), plain.end());
    double peakT = *std::max_element(transposed.begin(), transposed.end());
    std::fprintf(log, "  %-4s GEMM peak %.0f TFLOP/s (A transposed %.0f)", type,
                 peak / 1e12, peakT / 1e12);
    if (std::string(type) == "bf16")
      std::fprintf(log, ", %.0f%% of the %.0f TFLOP/s datasheet peak",
                   100 * peak / r.datasheetBf16, r.datasheetBf16 / 1e12);
    std::fprintf(log, "\n");
  }
  std::fprintf(log,
               "  copy bandwidth %.0f GB/s at 2 MiB moved, %.0f GB/s at "
               "2 GiB (bytes read + written)\n",
               r.bandwidth.front() / 1e9, r.bandwidth.back() / 1e9);
  std::fprintf(log, "  launch overhead %.2f us\n", r.launchOverhead * 1e6);
  std::fprintf(log, "  measured in %.1f s\n", seconds);
}

int run(const Options &options) {
  auto start = std::chrono::steady_clock::now();
  Device &device = sharedDevice(options.device);
  std::FILE *log = options.output.empty() ? stderr : stdout;
  Results r;
  r.deviceName = device.name();
  std::tie(r.preset, r.datasheetBf16) = presetFor(r.deviceName);
  std::fprintf(log, "measuring %s ...\n", r.deviceName.c_str());
  r.gemm = measureGemms(options.quick);
  measureBandwidth(options.device, r);
  r.launchOverhead = measureLaunchOverhead();
  if (deviceCount() > 1)
    measureAllReduce(deviceCount(), log);
  else
    std::fprintf(log, "  one GPU: NCCL all-reduce not measured\n");
  std::string json = clusterJson(r);
  if (options.output.empty()) {
    std::fputs(json.c_str(), stdout);
  } else if (!(std::ofstream(options.output) << json)) {
    std::fprintf(stderr, "ober-gpu-calibrate: cannot write %s\n",
                 options.output.c_str());
    return 1;
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  summarize(r, device.info(), took.count(), log);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string problem;
  if (!parse(argc, argv, options, problem))
    return usage(problem.c_str());
  try {
    return run(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
