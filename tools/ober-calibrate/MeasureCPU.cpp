//===- MeasureCPU.cpp - ober-calibrate on this machine --------------------===//
//
// Part of Ober-Train. Measures what one core of this machine (a device of
// the `cpu` cluster) reaches: GEMMs through the kernel library the
// executables call (`ober_rt_cpu_matmul`, oneDNN, one thread), memory
// bandwidth of a streaming kernel by size, the fixed cost of a library
// call, and all-reduces through the runtime's collectives (the ranks of an
// `mpirun` job over MPI, or threads of this process as devices). Each
// figure is the best of three rounds; repetitions scale to the budget.
//
//===----------------------------------------------------------------------===//

#include "Calibrate.h"

#include "ober/Planning/CostModel.h"

#include "ober/Runtime/CPUKernels.h"
#include "ober/Runtime/Comm.h"
#include "ober/Runtime/DType.h"
#include "ober/Runtime/LaunchEnv.h"
#include "ober/Runtime/MPI.h"
#include "ober/Runtime/Npy.h"
#include "ober/Tools/CommandLine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

using namespace mlir;

using namespace mlir::ober::planning;

namespace {
using Clock = std::chrono::steady_clock;

double now() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

/// Seconds per call of `f`: calls repeated for at least `minSeconds`, the
/// best of three rounds (after one call that warms caches and creates the
/// kernel).
double secondsPerCall(const std::function<void()> &f, double minSeconds) {
  f();
  double best = HUGE_VAL;
  for (int round = 0; round < 3; ++round) {
    int64_t calls = 0;
    double start = now(), elapsed = 0;
    do {
      f();
      ++calls;
      elapsed = now() - start;
    } while (elapsed < minSeconds);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

template <int R> using Ranked = ::ober::rt::RankedMemref<R>;

template <int R, typename T>
Ranked<R> ranked(T *data, const int64_t (&sizes)[R]) {
  return Ranked<R>::over(data, sizes);
}

/// One f32 product C[m,n] = A[m,k] B[k,n] through the kernel library, on
/// cold operands as in a training step (where activations were written
/// long before and the step's traffic evicts weights): the calls cycle
/// through copies of the operands larger together than the caches, slices
/// of pools that every product shares (filled once: filling copies for each
/// shape took most of the calibration's time).
struct Product {
  struct Operands {
    Ranked<3> ma, mb, mc;
    ober_rt_buffer ua, ub, uc;
  };
  std::vector<int64_t> desc;
  Ranked<1> d;
  ober_rt_buffer ud;
  std::vector<Operands> copies;
  size_t next = 0;

  /// With `transposedA`, A is stored [k, m] (a weight gradient X^T dY).
  Product(int64_t m, int64_t n, int64_t k, bool transposedA = false)
      : desc(OBER_MATMUL_FIELDS) {
    desc[OBER_MATMUL_BATCH] = desc[OBER_MATMUL_A_BATCH] =
        desc[OBER_MATMUL_B_BATCH] = 1;
    desc[OBER_MATMUL_M] = m;
    desc[OBER_MATMUL_N] = n;
    desc[OBER_MATMUL_K] = k;
    desc[OBER_MATMUL_TRANSPOSE_A] = transposedA;
    desc[OBER_MATMUL_DTYPE] = static_cast<int64_t>(::ober::rt::DType::F32);
    d = ranked(desc.data(), {OBER_MATMUL_FIELDS});
    ud = {1, &d.head};
    // Each copy's a and b, and its c, on 64-byte boundaries.
    auto rounded = [](int64_t n) { return (n + 15) / 16 * 16; };
    int64_t in = rounded(m * k) + rounded(k * n), out = rounded(m * n);
    size_t count =
        std::clamp<size_t>(kColdBytes / (4.0 * (in + out)) + 1, 1, 512);
    float *inputs = pool(0, count * in), *outputs = pool(1, count * out);
    copies.resize(count);
    for (size_t i = 0; i < count; ++i) {
      Operands &o = copies[i];
      float *a = inputs + i * in, *b = a + rounded(m * k),
            *c = outputs + i * out;
      o.ma = transposedA ? ranked(a, {1, k, m}) : ranked(a, {1, m, k});
      o.mb = ranked(b, {1, k, n});
      o.mc = ranked(c, {1, m, n});
      o.ua = {3, &o.ma.head};
      o.ub = {3, &o.mb.head};
      o.uc = {3, &o.mc.head};
    }
  }
  // The buffers point into this product's own fields.
  Product(const Product &) = delete;
  Product &operator=(const Product &) = delete;

  void run() {
    Operands &o = copies[next];
    next = (next + 1) % copies.size();
    _mlir_ciface_ober_rt_cpu_matmul(&ud, &o.ua, &o.ub, &o.uc);
  }
  /// Bytes the copies take together: past the last-level cache.
  static constexpr double kColdBytes = 96.0 * (1 << 20);

private:
  /// At least `floats` values of the inputs' pool (`which` 0: 0.25
  /// everywhere, never written, so that every product stays exact and far
  /// from overflow) or the outputs' (1), kept for the next product: a
  /// product's slices are valid until the next one is made.
  static float *pool(int which, size_t floats) {
    static std::vector<float> pools[2];
    std::vector<float> &p = pools[which];
    if (p.size() < floats) // at most doubling: few refills
      p.assign(std::max(floats, 2 * p.size()), 0.25f);
    return p.data();
  }
};

GemmTable measureGemms(double budget) {
  GemmTable t;
  t.m = t.n = t.k = {16, 64, 256, 1024, 2048};
  size_t points = t.m.size() * t.n.size() * t.k.size();
  double perPoint = budget / points / 8;
  for (bool transposedA : {false, true})
    for (double m : t.m)
      for (double n : t.n)
        for (double k : t.k) {
          Product p(m, n, k, transposedA);
          double seconds = secondsPerCall([&] { p.run(); }, perPoint);
          (transposedA ? t.flopsTransposedA : t.flops)
              .push_back(2 * m * n * k / seconds);
        }
  return t;
}

/// A streaming kernel (a = b + s c) moving 12 bytes per element.
Curve measureBandwidth(double budget) {
  Curve c;
  std::vector<double> sizes;
  for (double bytes = 48 * 1024; bytes <= 768.0 * 1024 * 1024; bytes *= 4)
    sizes.push_back(bytes);
  for (double bytes : sizes) {
    size_t n = static_cast<size_t>(bytes / 12);
    std::vector<float> a(n), b(n, 1.0f), x(n, 2.0f);
    float s = 0.5f;
    double seconds = secondsPerCall(
        [&] {
          for (size_t i = 0; i < n; ++i)
            a[i] = b[i] + s * x[i];
          s = a[n / 2] * 1e-9f + 0.5f; // keep the loop
        },
        budget / sizes.size() / 4);
    c.x.push_back(12.0 * n);
    c.y.push_back(12.0 * n / seconds);
  }
  return c;
}

/// Elementwise work as generated code runs it, on 512 x 1024 values: the
/// special kind (a layer norm, GELU, softmax), and simple arithmetic with
/// broadcasts (a chain the code generator fuses).
constexpr const char *kSpecialKernel = R"(
func.func @main(%x: tensor<512x1024xf32>, %g: tensor<1024xf32>,
                %b: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %0 = ober.layer_norm %x scale %g bias %b {axis = 1 : i64, epsilon = 1.0e-5 : f64}
      : (tensor<512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<512x1024xf32>
  %1 = ober.gelu %0 {approximate = #ober.gelu_approximation<tanh>} : tensor<512x1024xf32>
  %2 = ober.softmax %1 {axis = 1 : i64} : tensor<512x1024xf32>
  return %2 : tensor<512x1024xf32>
}
)";
constexpr const char *kSimpleKernel = R"(
func.func @main(%x: tensor<512x1024xf32>, %g: tensor<1024xf32>,
                %b: tensor<1024xf32>) -> tensor<512x1024xf32> {
  %0 = ober.mul %x, %g : (tensor<512x1024xf32>, tensor<1024xf32>) -> tensor<512x1024xf32>
  %1 = ober.add %0, %b : (tensor<512x1024xf32>, tensor<1024xf32>) -> tensor<512x1024xf32>
  %2 = ober.mul %1, %x : tensor<512x1024xf32>
  %3 = ober.sub %2, %0 : tensor<512x1024xf32>
  %4 = ober.add %3, %x : tensor<512x1024xf32>
  return %4 : tensor<512x1024xf32>
}
)";

/// FLOP/s (as the cost model counts elementwise work: workOf) of generated
/// code: `kernel` compiled by ober-compile into an executable, run on one
/// thread: the fastest of three processes' mean warm runs (a process's
/// first run maps its buffers' pages and creates its kernels, which a
/// training step, reusing freed memory, does not: on a virtual machine
/// the first run took 4-10x as long).
std::optional<double> measureVectorFlops(MLIRContext &context,
                                         const char *kernel,
                                         std::string &error) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kernel, &context);
  if (!module) {
    error = "the elementwise kernel does not parse";
    return std::nullopt;
  }
  double flops = 0;
  module->walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "ober")
      flops += workOf(op).flops;
  });
  SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("ober-calibrate", dir)) {
    error = "cannot create a temporary directory";
    return std::nullopt;
  }
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
  auto path = [&](StringRef name) {
    SmallString<128> p = dir;
    llvm::sys::path::append(p, name);
    return std::string(p);
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path("kernel.mlir"), ec);
    os << kernel;
  }
  std::string compiler = mlir::ober::toolBesideThisOne("ober-compile");
  std::string log = path("log.txt"), exe = path("kernel"),
              source = path("kernel.mlir");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                          StringRef(log)};
  std::vector<StringRef> compile = {compiler, source, "--inference", "-o",
                                    exe};
  if (llvm::sys::ExecuteAndWait(compiler, compile, std::nullopt, redirects)) {
    auto text = llvm::MemoryBuffer::getFile(log);
    error = std::string(compiler) +
            " could not build the elementwise kernel: " +
            (text ? (*text)->getBuffer().take_back(1000).str() : "");
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs = {
      {"x.npy", {512, 1024}}, {"g.npy", {1024}}, {"b.npy", {1024}}};
  std::vector<std::string> args = {exe};
  for (auto &[name, shape] : inputs) {
    ::ober::rt::NpyArray a;
    a.shape = shape;
    int64_t n = a.numElements();
    a.data.resize(n * sizeof(float));
    float *v = reinterpret_cast<float *>(a.data.data());
    for (int64_t i = 0; i < n; ++i)
      v[i] = 0.5f + 0.25f * std::sin(0.1f * i);
    if (!::ober::rt::writeNpy(path(name), a, error))
      return std::nullopt;
    args.insert(args.end(), {"--input", path(name)});
  }
  args.insert(args.end(), {"--timing", "--threads", "1", "--repeat", "6"});
  std::vector<StringRef> run(args.begin(), args.end());
  double best = HUGE_VAL;
  for (int i = 0; i < 3; ++i) {
    if (llvm::sys::ExecuteAndWait(exe, run, std::nullopt, redirects)) {
      error = "the elementwise kernel's executable failed";
      return std::nullopt;
    }
    auto text = llvm::MemoryBuffer::getFile(log);
    double seconds = 0;
    StringRef out = text ? (*text)->getBuffer() : StringRef();
    StringRef warm = "later steps ";
    size_t at = out.find(warm);
    if (at == StringRef::npos ||
        out.drop_front(at + warm.size())
            .take_until([](char c) { return c == ' '; })
            .getAsDouble(seconds)) {
      error = "the elementwise kernel's executable printed no timing";
      return std::nullopt;
    }
    best = std::min(best, seconds);
  }
  return flops / best;
}

/// All-reduces of one rank's channel over all of its transport's ranks.
Curve measureAllReduce(::ober::rt::Transport &transport, int64_t rank,
                       int64_t members, double budget) {
  ::ober::rt::Grid grid({members});
  ::ober::rt::Channel channel(transport, grid, rank, {{0}});
  Curve c;
  std::vector<int64_t> counts;
  for (int64_t n = 16 * 1024; n <= 16 * 1024 * 1024; n *= 4)
    counts.push_back(n);
  for (int64_t n : counts) {
    std::vector<float> in(n, 1.0f), out(n);
    ::ober::rt::CollectiveDesc d;
    d.shape = {n};
    d.gridAxes = {0};
    d.peer = {0};
    // Every rank must run as many calls: each times one after a warm-up
    // and they agree on the largest count any wants.
    double bytes = 4.0 * n;
    double perSize = budget / counts.size() / 4;
    channel.run(d, in.data(), out.data());
    double start = now();
    channel.run(d, in.data(), out.data());
    double once = now() - start;
    // Agree on the repetitions: the largest any rank wants.
    std::vector<float> want(1, static_cast<float>(
                                   std::clamp(perSize / once, 1.0, 1000.0))),
        agreed(1);
    ::ober::rt::CollectiveDesc mx = d;
    mx.shape = {1};
    mx.reduction = OBER_REDUCE_MAX;
    channel.run(mx, want.data(), agreed.data());
    int64_t calls = static_cast<int64_t>(agreed[0]);
    double best = HUGE_VAL;
    for (int round = 0; round < 3; ++round) {
      start = now();
      for (int64_t i = 0; i < calls; ++i)
        channel.run(d, in.data(), out.data());
      best = std::min(best, (now() - start) / calls);
    }
    double p = static_cast<double>(members);
    c.x.push_back(bytes);
    c.y.push_back(bytes * 2 * (p - 1) / p / best);
  }
  return c;
}

/// The bus bandwidth of all-reduces among `members` threads of this
/// process (the runtime's shared-memory transport).
Curve measureThreadAllReduce(int64_t members, double budget) {
  auto hub = ::ober::rt::makeThreadHub(members, 120);
  Curve result;
  std::vector<std::thread> threads;
  for (int64_t r = 0; r < members; ++r)
    threads.emplace_back([&, r] {
      auto transport = ::ober::rt::threadTransport(hub, r);
      Curve c = measureAllReduce(*transport, r, members, budget);
      if (r == 0)
        result = c;
    });
  for (std::thread &t : threads)
    t.join();
  return result;
}
} // namespace

LogicalResult
mlir::ober::calibrate::measureThisMachine(MLIRContext &context,
                                          Cluster &cluster,
                                          MeasureOptions &options) {
  ober_rt_launch_env env;
  char error[512];
  if (ober_rt_read_launch_env(&env, nullptr, nullptr, error, sizeof(error))) {
    llvm::errs() << "error: " << error << "\n";
    return failure();
  }
  bool mpi = std::string(env.launcher) != "none" && env.world_size > 1;
  std::unique_ptr<::ober::rt::Transport> transport;
  if (mpi) {
    std::string why;
    transport = ::ober::rt::mpiTransport(why);
    if (!transport) {
      llvm::errs() << "error: " << why << "\n";
      return failure();
    }
    options.writer = transport->rank() == 0;
  }
  double budget = options.budget;
  auto say = [&](const std::string &what) {
    if (options.writer)
      llvm::errs() << what << "\n";
  };
  // One core per device: the library on one thread.
  ober_rt_cpu_set_threads(1);
  Device &d = cluster.device;
  GemmTable gemm = measureGemms(budget * 0.45);
  double best = *std::max_element(gemm.flops.begin(), gemm.flops.end());
  say(llvm::formatv("GEMM f32: {0:f1} GFLOP/s at 2048^3, {1:f1} at 64^3, "
                    "{2:f1} at 1024 x 256 x 1024 with A transposed (one core)",
                    gemm.flops.back() / 1e9,
                    gemm.flops[(1 * 5 + 1) * 5 + 1] / 1e9,
                    gemm.flopsTransposedA[(3 * 5 + 2) * 5 + 3] / 1e9)
          .str());
  d.gemm["f32"] = gemm;
  d.gemm["bf16"] = gemm; // the CPU kernels compute in f32
  for (auto &[type, peak] : d.peakFlops)
    if (type != "f64")
      peak = std::max(peak, best);
  Product tiny(1, 1, 1);
  d.kernelOverhead = secondsPerCall([&] { tiny.run(); }, 0.05);
  d.launchOverhead = 0; // the host is the device
  say(llvm::formatv("a library call: {0:f2} us", d.kernelOverhead * 1e6).str());
  if (options.writer) {
    std::string why;
    std::optional<double> simple =
        measureVectorFlops(context, kSimpleKernel, why);
    std::optional<double> special =
        simple ? measureVectorFlops(context, kSpecialKernel, why)
               : std::nullopt;
    if (!special) {
      llvm::errs() << "error: " << why << "\n";
      return failure();
    }
    d.vectorFlops = *simple;
    d.specialFlops = *special;
    say(llvm::formatv("generated elementwise code: {0:f2} GFLOP/s (norms, "
                      "softmax, GELU: {1:f2})",
                      d.vectorFlops / 1e9, d.specialFlops / 1e9)
            .str());
  }
  d.bandwidthBySize = measureBandwidth(budget * 0.25);
  d.memoryBandwidth = d.bandwidthBySize.y.back();
  say(llvm::formatv("memory bandwidth: {0:f1} GB/s at {1} MiB, {2:f1} GB/s "
                    "in cache",
                    d.memoryBandwidth / 1e9,
                    d.bandwidthBySize.x.back() / (1 << 20),
                    d.bandwidthBySize.y.front() / 1e9)
          .str());
  LinkLevel &local = cluster.links.front();
  local.busBandwidth = {};
  if (mpi) {
    int64_t members = transport->size();
    local.busBandwidth.byGroup[members] = measureAllReduce(
        *transport, transport->rank(), members, budget * 0.3);
  } else {
    int64_t cores = cluster.devicesPerNode;
    for (int64_t g = 2; g <= cores; g *= 2)
      local.busBandwidth.byGroup[g] =
          measureThreadAllReduce(g, budget * 0.3 / std::max<int64_t>(1, cores / 2));
  }
  for (const auto &[group, curve] : local.busBandwidth.byGroup)
    say(llvm::formatv("all-reduce among {0} {1}: {2:f2} GB/s bus bandwidth at "
                      "{3} MiB",
                      group, mpi ? "ranks (MPI)" : "threads", curve.y.back() / 1e9,
                      curve.x.back() / (1 << 20))
            .str());
  if (mpi) {
    transport.reset();
    ::ober::rt::mpiFinalize();
  }
  std::string why;
  if (failed(cluster.verify(why))) {
    llvm::errs() << "error: the measured cluster is not valid: " << why << "\n";
    return failure();
  }
  return success();
}
