//===- Cluster.cpp - the machines a plan runs on --------------------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Cluster.h"

#include "PresetTables.h"

#include "ober/Conversion/LoweringKinds.h"
#include "ober/Runtime/CUDAKernels.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <thread>
#include <unistd.h>

using namespace mlir;
using namespace mlir::ober::planning;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Presets (vendor datasheets; see docs/design/Planning.md)
//===----------------------------------------------------------------------===//

namespace {
constexpr double T = 1e12, G = 1e9;

Cluster nvidia(const char *name, const char *device, double bf16, double tf32,
               double f32, double f8, double memory, double bandwidth,
               double nvlink, double network, double multiprocessors) {
  Cluster c;
  c.name = name;
  c.device.name = device;
  c.device.peakFlops = {{"bf16", bf16}, {"f16", bf16}, {"tf32", tf32},
                        {"f32", f32}};
  if (f8 > 0)
    c.device.peakFlops["f8"] = f8;
  c.device.memoryBytes = memory;
  c.device.memoryBandwidth = bandwidth;
  c.devicesPerNode = 8;
  // Per device and direction; one HCA per GPU. The NVLink latency per ring
  // step (1.5 us) reproduces nccl-tests' all-reduce bus bandwidth on 8 H100s
  // (about 67 GB/s at 1 MB, 400 GB/s at 128 MB, 466 GB/s at 1 GB;
  // unittests/Planning).
  c.links = {{"nvlink", 8, nvlink, 1.5e-6, {}}, {"infiniband", 8, network, 10e-6, {}}};
  // Half-precision GEMMs by the tile model; the host launches a kernel of
  // a compiled program in about 4 us (cudaLaunchKernel).
  TiledGemm tiles;
  tiles.peak = bf16;
  tiles.multiprocessors = multiprocessors;
  c.device.gemm["bf16"] = c.device.gemm["f16"] = tiledGemmTable(tiles);
  c.device.launchOverhead = 4e-6;
  return c;
}

/// This machine: each core counts as a device of one node, with peak FLOP/s
/// from AVX-512 FMA at 2.5 GHz (2 units x 16 lanes x 2 FLOPs).
Cluster thisCPU() {
  Cluster c;
  c.name = "cpu";
  c.device.name = "cpu-core";
  double perCore = 2 * 16 * 2 * 2.5 * G;
  c.device.peakFlops = {{"f32", perCore}, {"bf16", perCore}, {"f64", perCore / 2}};
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  c.device.memoryBytes =
      pages > 0 && pageSize > 0 ? double(pages) * pageSize / cores : 4 * G;
  c.device.memoryBandwidth = 10 * G;
  c.device.matmulEfficiency = 0.5;
  c.device.kernelOverhead = 0.2e-6;
  c.devicesPerNode = cores;
  c.links = {{"shared-memory", cores, 10 * G, 1e-6, {}},
             {"ethernet", cores, 1.25 * G, 20e-6, {}}};
  return c;
}
} // namespace

std::vector<std::string> mlir::ober::planning::presetNames() {
  return {"a100-40gb", "a100-80gb", "h100-sxm", "h200-sxm", "max-1550", "cpu"};
}

std::optional<Cluster> mlir::ober::planning::preset(const std::string &name) {
  // A100: the matmul efficiency is calibrated against the end-to-end
  // throughput of Narayanan et al. (SC21) Table 1 (utils/bench/plan_sc21.py);
  // the other devices keep the uncalibrated default.
  if (name == "a100-40gb" || name == "a100-80gb") {
    bool big = name == "a100-80gb";
    Cluster c = nvidia(big ? "a100-80gb" : "a100-40gb",
                       big ? "NVIDIA A100 80GB SXM" : "NVIDIA A100 40GB SXM",
                       312 * T, 156 * T, 19.5 * T, 0, (big ? 80 : 40) * G,
                       (big ? 2.039 : 1.555) * T, 300 * G, 25 * G, 108);
    c.device.matmulEfficiency = 0.70;
    c.links.front().busBandwidth = a100NvlinkAllReduce();
    return c;
  }
  if (name == "h100-sxm")
    return nvidia("h100-sxm", "NVIDIA H100 SXM", 989 * T, 495 * T, 67 * T,
                  1979 * T, 80 * G, 3.35 * T, 450 * G, 50 * G, 132);
  if (name == "h200-sxm")
    return nvidia("h200-sxm", "NVIDIA H200 SXM", 989 * T, 495 * T, 67 * T,
                  1979 * T, 141 * G, 4.8 * T, 450 * G, 50 * G, 132);
  if (name == "max-1550") {
    Cluster c;
    c.name = "max-1550";
    c.device.name = "Intel Data Center GPU Max 1550";
    c.device.peakFlops = {{"bf16", 839 * T}, {"f16", 839 * T}, {"f32", 52 * T}};
    c.device.memoryBytes = 128 * G;
    c.device.memoryBandwidth = 3.28 * T;
    c.devicesPerNode = 6;
    c.device.kernelOverhead = 5e-6;
    c.links = {{"xe-link", 6, 15 * G, 10e-6, {}}, {"slingshot", 6, 25 * G, 10e-6, {}}};
    return c;
  }
  if (name == "cpu")
    return thisCPU();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

namespace {
/// What a plausible cluster lies within: figures outside these are typos
/// or unit mistakes (bytes for gigabytes), not machines.
constexpr int64_t kMaxDevicesPerNode = 4096;
constexpr int64_t kMaxDevices = int64_t(1) << 20;
constexpr double kMinPeakFlops = 1e6, kMaxPeakFlops = 1e17;       // FLOP/s
constexpr double kMinMemoryBytes = 1 << 20, kMaxMemoryBytes = 1e15; // bytes
constexpr double kMinBandwidth = 1e6, kMaxBandwidth = 1e15;        // bytes/s
constexpr double kMaxLatency = 1;                                  // seconds

/// The element types a device's peak FLOP/s may be given for.
constexpr const char *kFlopTypes[] = {"f64", "f32", "tf32", "bf16", "f16", "f8"};

std::string within(double lo, double hi, const char *unit) {
  return llvm::formatv("must be between {0:e2} and {1:e2} {2}", lo, hi, unit)
      .str();
}
} // namespace

LogicalResult Cluster::verify(std::string &error) const {
  auto fail = [&](const std::string &field, const std::string &what) {
    error = "cluster." + field + ": " + what;
    return failure();
  };
  if (device.peakFlops.empty())
    return fail("device.peak_flops", "needs at least one element type");
  for (const auto &[type, flops] : device.peakFlops) {
    if (!llvm::is_contained(kFlopTypes, type)) {
      std::string known;
      for (const char *t : kFlopTypes)
        known += std::string(known.empty() ? "" : ", ") + t;
      return fail("device.peak_flops." + type,
                  "is not an element type (known: " + known + ")");
    }
    if (!(flops >= kMinPeakFlops && flops <= kMaxPeakFlops))
      return fail("device.peak_flops." + type,
                  within(kMinPeakFlops, kMaxPeakFlops, "FLOP/s"));
  }
  if (!(device.memoryBytes >= kMinMemoryBytes &&
        device.memoryBytes <= kMaxMemoryBytes))
    return fail("device.memory_bytes",
                within(kMinMemoryBytes, kMaxMemoryBytes, "bytes"));
  if (!(device.memoryBandwidth >= kMinBandwidth &&
        device.memoryBandwidth <= kMaxBandwidth))
    return fail("device.memory_bandwidth",
                within(kMinBandwidth, kMaxBandwidth, "bytes/s"));
  if (!(device.matmulEfficiency > 0 && device.matmulEfficiency <= 1))
    return fail("device.matmul_efficiency", "must be in (0, 1]");
  if (!(device.memoryEfficiency > 0 && device.memoryEfficiency <= 1))
    return fail("device.memory_efficiency", "must be in (0, 1]");
  if (!(device.kernelOverhead >= 0 && device.kernelOverhead < 1))
    return fail("device.kernel_overhead", "must be in [0, 1) seconds");
  if (!(device.launchOverhead >= 0 && device.launchOverhead < 1))
    return fail("device.launch_overhead", "must be in [0, 1) seconds");
  if (!(device.launchOverlap >= 0 && device.launchOverlap <= 1))
    return fail("device.launch_overlap", "must be in [0, 1]");
  for (auto [key, value] : {std::pair("vector_flops", device.vectorFlops),
                            {"special_flops", device.specialFlops}})
    if (!(value == 0 || (value >= kMinPeakFlops && value <= kMaxPeakFlops)))
      return fail(std::string("device.") + key,
                  "must be 0 (peak x memory_efficiency) or " +
                      within(kMinPeakFlops, kMaxPeakFlops, "FLOP/s"));
  if (!(device.transferOverhead >= 0 && device.transferOverhead < 1))
    return fail("device.transfer_overhead", "must be in [0, 1) seconds");
  const Device::SoftmaxFusion &fusion = device.softmaxFusion;
  if (fusion.batchMultiple < 0 || fusion.batchMultiple > 4096)
    return fail("device.fused_softmax.batch_multiple",
                "must be between 0 (always fused) and 4096");
  if (fusion.maxKeys < 0)
    return fail("device.fused_softmax.max_keys",
                "must be at least 0 (0: no limit)");
  if (!(fusion.fallbackKernels >= 0 && fusion.fallbackKernels <= 64))
    return fail("device.fused_softmax.fallback_kernels",
                "must be between 0 and 64 kernels");
  for (const auto &[type, table] : device.gemm)
    if (!llvm::is_contained(kFlopTypes, type))
      return fail("device.gemm." + type,
                  "is not an element type of device.peak_flops");
  if (devicesPerNode < 1 || devicesPerNode > kMaxDevicesPerNode)
    return fail("devices_per_node", "must be between 1 and " +
                                        std::to_string(kMaxDevicesPerNode));
  if (nodes < 1 || nodes > kMaxDevices / devicesPerNode)
    return fail("nodes", "must be at least 1, and nodes x devices_per_node "
                         "at most " + std::to_string(kMaxDevices));
  if (links.empty())
    return fail("links", "needs at least the level that joins the devices "
                         "of a node");
  if (nodes > 1 && links.size() < 2)
    return fail("links", "a cluster of " + std::to_string(nodes) +
                             " nodes needs a level between nodes");
  for (size_t i = 0; i < links.size(); ++i) {
    std::string field = "links[" + std::to_string(i) + "]";
    const LinkLevel &l = links[i];
    if (!(l.bandwidth >= kMinBandwidth && l.bandwidth <= kMaxBandwidth))
      return fail(field + ".bandwidth",
                  within(kMinBandwidth, kMaxBandwidth, "bytes/s"));
    if (!(l.latency >= 0 && l.latency <= kMaxLatency))
      return fail(field + ".latency", "must be between 0 and 1 seconds");
    if (l.groupSize < 1 || l.groupSize > numDevices())
      return fail(field + ".group_size",
                  "must be between 1 and the cluster's " +
                      std::to_string(numDevices()) + " devices");
    // Innermost first: each level joins whole groups of the one inside it,
    // and a level inside a node joins whole parts of it.
    if (i && l.groupSize % links[i - 1].groupSize)
      return fail(field + ".group_size",
                  "must be a multiple of links[" + std::to_string(i - 1) +
                      "].group_size = " +
                      std::to_string(links[i - 1].groupSize) +
                      " (levels go innermost first)");
    if (l.groupSize < devicesPerNode ? devicesPerNode % l.groupSize
                                     : l.groupSize % devicesPerNode)
      return fail(field + ".group_size",
                  "must divide, or be a multiple of, devices_per_node = " +
                      std::to_string(devicesPerNode));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

json::Value Cluster::toJSON() const {
  json::Object flops;
  for (const auto &[type, value] : device.peakFlops)
    flops[type] = value;
  json::Array linkArray;
  for (const LinkLevel &l : links) {
    json::Object level{{"name", l.name},
                       {"group_size", l.groupSize},
                       {"bandwidth", l.bandwidth},
                       {"latency", l.latency}};
    if (!l.busBandwidth.empty())
      level["bus_bandwidth"] = planning::toJSON(l.busBandwidth);
    linkArray.push_back(std::move(level));
  }
  json::Object dev{{"name", device.name},
                   {"peak_flops", std::move(flops)},
                   {"memory_bytes", device.memoryBytes},
                   {"memory_bandwidth", device.memoryBandwidth},
                   {"matmul_efficiency", device.matmulEfficiency},
                   {"memory_efficiency", device.memoryEfficiency},
                   {"kernel_overhead", device.kernelOverhead},
                   {"launch_overhead", device.launchOverhead},
                   {"launch_overlap", device.launchOverlap},
                   {"transfer_overhead", device.transferOverhead},
                   {"vector_flops", device.vectorFlops},
                   {"special_flops", device.specialFlops}};
  if (!device.gemm.empty()) {
    json::Object gemm;
    for (const auto &[type, table] : device.gemm)
      gemm[type] = planning::toJSON(table);
    dev["gemm"] = std::move(gemm);
  }
  if (!device.bandwidthBySize.empty())
    dev["memory_bandwidth_by_size"] =
        planning::toJSON(device.bandwidthBySize, "bytes", "bandwidth");
  const Device::SoftmaxFusion &fusion = device.softmaxFusion;
  if (fusion.batchMultiple > 0)
    dev["fused_softmax"] =
        json::Object{{"batch_multiple", fusion.batchMultiple},
                     {"max_keys", fusion.maxKeys},
                     {"fallback_kernels", fusion.fallbackKernels}};
  if (device.recomputeWholeForward)
    dev["full_recompute"] = "forward";
  return json::Object{
      {"name", name},
      {"device", std::move(dev)},
      {"devices_per_node", devicesPerNode},
      {"nodes", nodes},
      {"links", std::move(linkArray)}};
}

namespace {
/// Reads fields of one JSON object, remembering the first error.
class FieldReader {
public:
  /// `keys`: every key the object may have.
  FieldReader(const json::Object *object, std::string path,
              ArrayRef<StringRef> keys, std::string &error)
      : object(object), path(std::move(path)), keys(keys), error(error) {}

  bool number(const char *key, double &out, bool required = true) {
    const json::Value *v = object ? object->get(key) : nullptr;
    if (!v)
      return !required || fail(key, "is missing");
    std::optional<double> d = v->getAsNumber();
    if (!d)
      return fail(key, "must be a number");
    out = *d;
    return true;
  }
  bool integer(const char *key, int64_t &out, bool required = true) {
    const json::Value *v = object ? object->get(key) : nullptr;
    if (!v)
      return !required || fail(key, "is missing");
    std::optional<int64_t> i = v->getAsInteger();
    if (!i)
      return fail(key, "must be an integer");
    out = *i;
    return true;
  }
  bool string(const char *key, std::string &out, bool required = true) {
    const json::Value *v = object ? object->get(key) : nullptr;
    if (!v)
      return !required || fail(key, "is missing");
    std::optional<StringRef> s = v->getAsString();
    if (!s)
      return fail(key, "must be a string");
    out = s->str();
    return true;
  }
  bool fail(StringRef key, StringRef what) {
    if (error.empty())
      error = path + "." + key.str() + ": " + what.str();
    return false;
  }
  /// No key but the accepted ones: a misspelt one would otherwise be
  /// ignored, or reported as a missing one.
  bool noOthers() {
    if (!object)
      return true;
    for (const auto &entry : *object) {
      if (llvm::is_contained(keys, StringRef(entry.first)))
        continue;
      std::string list = llvm::join(keys, ", ");
      return fail(entry.first, "is not a known key (accepted: " + list + ")");
    }
    return true;
  }

  const json::Object *object;
  std::string path;
  /// A copy: the caller's list is a temporary.
  SmallVector<StringRef, 8> keys;
  std::string &error;
};
} // namespace

/// `over`'s fields on top of `base`: objects merge key by key, other
/// values (numbers, strings, arrays) replace.
static void overlay(json::Object &base, const json::Object &over) {
  for (const auto &[key, value] : over) {
    json::Object *inner = base.getObject(key);
    if (inner && value.getAsObject())
      overlay(*inner, *value.getAsObject());
    else
      base[key] = value;
  }
}

std::optional<Cluster>
mlir::ober::planning::clusterFromJSON(const json::Value &value,
                                      std::string &error) {
  const json::Object *root = value.getAsObject();
  if (!root) {
    error = "cluster: must be a JSON object";
    return std::nullopt;
  }
  // A file may start from a preset and change some of its fields.
  if (const json::Value *base = root->get("preset")) {
    std::optional<StringRef> name = base->getAsString();
    std::optional<Cluster> p = name ? preset(name->str()) : std::nullopt;
    if (!p) {
      error = "cluster.preset: must name a preset (" +
              llvm::join(presetNames(), ", ") + ")";
      return std::nullopt;
    }
    json::Object merged = *p->toJSON().getAsObject();
    json::Object rest = *root;
    rest.erase("preset");
    overlay(merged, rest);
    // Links of its own whose outermost level spans more nodes than the
    // preset's one: as many nodes as that level joins, unless the file
    // says (gpus= and nodes= resize it as any cluster).
    const json::Array *links = rest.getArray("links");
    std::optional<int64_t> perNode = merged.getInteger("devices_per_node");
    if (links && !links->empty() && !rest.get("nodes") && perNode &&
        *perNode > 0)
      if (const json::Object *outer = links->back().getAsObject())
        if (std::optional<int64_t> group = outer->getInteger("group_size");
            group && *group > *perNode && *group % *perNode == 0)
          merged["nodes"] = *group / *perNode;
    return clusterFromJSON(json::Value(std::move(merged)), error);
  }
  Cluster c;
  FieldReader top(root, "cluster",
                  {"name", "preset", "device", "devices_per_node", "nodes",
                   "links"},
                  error);
  const json::Object *device = root->getObject("device");
  FieldReader dev(device, "cluster.device",
                  {"name", "peak_flops", "memory_bytes", "memory_bandwidth",
                   "matmul_efficiency", "memory_efficiency", "kernel_overhead",
                   "launch_overhead", "launch_overlap", "transfer_overhead",
                   "vector_flops", "special_flops", "gemm",
                   "memory_bandwidth_by_size", "fused_softmax",
                   "full_recompute"},
                  error);
  const json::Object *fusion =
      device ? device->getObject("fused_softmax") : nullptr;
  FieldReader fused(fusion, "cluster.device.fused_softmax",
                    {"batch_multiple", "max_keys", "fallback_kernels"}, error);
  Device::SoftmaxFusion &rule = c.device.softmaxFusion;
  std::string recompute = "needed";
  const json::Object *flops = device ? device->getObject("peak_flops") : nullptr;
  bool ok = top.noOthers() && dev.noOthers() &&
            top.string("name", c.name, /*required=*/false) &&
            (device || top.fail("device", "must be an object")) &&
            dev.string("name", c.device.name, false) &&
            (flops || dev.fail("peak_flops",
                               "must be an object of FLOP/s by element type")) &&
            dev.number("memory_bytes", c.device.memoryBytes) &&
            dev.number("memory_bandwidth", c.device.memoryBandwidth) &&
            dev.number("matmul_efficiency", c.device.matmulEfficiency, false) &&
            dev.number("memory_efficiency", c.device.memoryEfficiency, false) &&
            dev.number("kernel_overhead", c.device.kernelOverhead, false) &&
            dev.number("launch_overhead", c.device.launchOverhead, false) &&
            dev.number("launch_overlap", c.device.launchOverlap, false) &&
            dev.number("transfer_overhead", c.device.transferOverhead, false) &&
            dev.number("vector_flops", c.device.vectorFlops, false) &&
            dev.number("special_flops", c.device.specialFlops, false) &&
            (!device->get("fused_softmax") || fusion ||
             dev.fail("fused_softmax", "must be an object")) &&
            (!fusion ||
             (fused.noOthers() && fused.integer("batch_multiple",
                                                rule.batchMultiple) &&
              fused.integer("max_keys", rule.maxKeys, false) &&
              fused.number("fallback_kernels", rule.fallbackKernels))) &&
            dev.string("full_recompute", recompute, false) &&
            (recompute == "needed" || recompute == "forward" ||
             dev.fail("full_recompute",
                      "must be \"needed\" (rebuild what the backward pass "
                      "reads) or \"forward\" (run the whole forward pass "
                      "again), not \"" + recompute + "\"")) &&
            top.integer("devices_per_node", c.devicesPerNode) &&
            top.integer("nodes", c.nodes, false);
  if (!ok)
    return std::nullopt;
  c.device.recomputeWholeForward = recompute == "forward";
  for (const auto &[type, v] : *flops) {
    std::optional<double> d = v.getAsNumber();
    if (!d) {
      error = "cluster.device.peak_flops." + type.str() + ": must be a number";
      return std::nullopt;
    }
    c.device.peakFlops[type.str()] = *d;
  }
  if (const json::Value *gemm = device->get("gemm")) {
    const json::Object *byType = gemm->getAsObject();
    if (!byType) {
      error = "cluster.device.gemm: must be an object of tables by element "
              "type";
      return std::nullopt;
    }
    for (const auto &[type, table] : *byType)
      if (!gemmTableFromJSON(table, "cluster.device.gemm." + type.str(),
                             c.device.gemm[type.str()], error))
        return std::nullopt;
  }
  if (const json::Value *curve = device->get("memory_bandwidth_by_size"))
    if (!curveFromJSON(*curve, "cluster.device.memory_bandwidth_by_size",
                       "bytes", "bandwidth", kMinBandwidth, kMaxBandwidth,
                       c.device.bandwidthBySize, error))
      return std::nullopt;
  const json::Array *links = root->getArray("links");
  if (!links) {
    top.fail("links", "must be an array of link levels, innermost first");
    return std::nullopt;
  }
  for (size_t i = 0; i < links->size(); ++i) {
    LinkLevel l;
    FieldReader r((*links)[i].getAsObject(),
                  "cluster.links[" + std::to_string(i) + "]",
                  {"name", "group_size", "bandwidth", "latency",
                   "bus_bandwidth"},
                  error);
    if (!r.object) {
      error = "cluster.links[" + std::to_string(i) + "]: must be an object";
      return std::nullopt;
    }
    if (!r.noOthers() || !r.string("name", l.name, false) ||
        !r.integer("group_size", l.groupSize) ||
        !r.number("bandwidth", l.bandwidth) || !r.number("latency", l.latency))
      return std::nullopt;
    if (const json::Value *bus = r.object->get("bus_bandwidth"))
      if (!busBandwidthFromJSON(*bus, r.path + ".bus_bandwidth",
                                l.busBandwidth, error))
        return std::nullopt;
    c.links.push_back(l);
  }
  if (failed(c.verify(error)))
    return std::nullopt;
  return c;
}

std::optional<Cluster> mlir::ober::planning::loadCluster(
    const std::string &nameOrPath, std::optional<int64_t> gpus,
    std::optional<int64_t> nodes, std::string &error) {
  for (auto [name, count] : {std::pair("gpus", gpus), {"nodes", nodes}})
    if (count && (*count < 1 || *count > kMaxDevices)) {
      error = std::string(name) + "=" + std::to_string(*count) +
              " must be between 1 and " + std::to_string(kMaxDevices);
      return std::nullopt;
    }
  std::optional<Cluster> c = preset(nameOrPath);
  if (!c) {
    auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
    if (!buffer) {
      error = "cluster '" + nameOrPath + "' is neither a preset (";
      for (auto [i, n] : llvm::enumerate(presetNames()))
        error += (i ? ", " : "") + n;
      error += ") nor a readable JSON file";
      return std::nullopt;
    }
    llvm::Expected<json::Value> parsed = json::parse((*buffer)->getBuffer());
    if (!parsed) {
      error = nameOrPath + ": " + llvm::toString(parsed.takeError());
      return std::nullopt;
    }
    c = clusterFromJSON(*parsed, error);
    if (!c) {
      error = nameOrPath + ": " + error;
      return std::nullopt;
    }
  }
  if (failed(resizeCluster(*c, gpus, nodes, error)))
    return std::nullopt;
  return c;
}

LogicalResult mlir::ober::planning::resizeCluster(Cluster &cluster,
                                                  std::optional<int64_t> gpus,
                                                  std::optional<int64_t> nodes,
                                                  std::string &error) {
  Cluster *c = &cluster;
  for (auto [name, count] : {std::pair("gpus", gpus), {"nodes", nodes}})
    if (count && (*count < 1 || *count > kMaxDevices)) {
      error = std::string(name) + "=" + std::to_string(*count) +
              " must be between 1 and " + std::to_string(kMaxDevices);
      return failure();
    }
  int64_t oldNode = c->devicesPerNode;
  if (gpus) {
    if (nodes) {
      if (*gpus % *nodes) {
        error = "gpus=" + std::to_string(*gpus) + " do not split evenly over "
                "nodes=" + std::to_string(*nodes);
        return failure();
      }
      c->devicesPerNode = *gpus / *nodes;
      c->nodes = *nodes;
    } else if (*gpus <= c->devicesPerNode || c->name == "cpu") {
      // Simulated CPU devices all live on this machine.
      c->devicesPerNode = *gpus;
      c->nodes = 1;
    } else if (*gpus % c->devicesPerNode == 0) {
      c->nodes = *gpus / c->devicesPerNode;
    } else {
      error = "gpus=" + std::to_string(*gpus) + " is not a whole number of " +
              std::to_string(c->devicesPerNode) + "-device nodes of '" +
              c->name + "' (pass nodes= to choose the node size)";
      return failure();
    }
  } else if (nodes) {
    c->nodes = *nodes;
  }
  if (c->devicesPerNode > kMaxDevicesPerNode) {
    error = "gpus=" + std::to_string(*gpus) + " makes nodes of " +
            std::to_string(c->devicesPerNode) + " devices; at most " +
            std::to_string(kMaxDevicesPerNode) +
            " fit a node (pass nodes= to spread them)";
    return failure();
  }
  // Levels that span whole nodes keep spanning as many nodes (the
  // outermost the whole cluster); levels inside a node stay as they are.
  for (LinkLevel &l : c->links)
    if (l.groupSize >= oldNode)
      l.groupSize = l.groupSize / oldNode * c->devicesPerNode;
  if (c->links.size() > 1)
    c->links.back().groupSize = c->numDevices();
  return c->verify(error);
}

//===----------------------------------------------------------------------===//
// The attribute form: the JSON object as a DictionaryAttr.
//===----------------------------------------------------------------------===//

static Attribute toAttribute(Builder &b, const json::Value &v) {
  if (const json::Object *o = v.getAsObject()) {
    SmallVector<NamedAttribute> entries;
    for (const auto &[key, value] : *o)
      entries.push_back(b.getNamedAttr(key, toAttribute(b, value)));
    return b.getDictionaryAttr(entries);
  }
  if (const json::Array *a = v.getAsArray()) {
    SmallVector<Attribute> items;
    for (const json::Value &item : *a)
      items.push_back(toAttribute(b, item));
    return b.getArrayAttr(items);
  }
  if (std::optional<StringRef> s = v.getAsString())
    return b.getStringAttr(*s);
  // Numbers are f64 (integer fields read back through getAsInteger).
  return b.getF64FloatAttr(v.getAsNumber().value_or(0));
}

static json::Value fromAttribute(Attribute a) {
  if (auto d = dyn_cast<DictionaryAttr>(a)) {
    json::Object o;
    for (NamedAttribute n : d)
      o[n.getName().getValue()] = fromAttribute(n.getValue());
    return o;
  }
  if (auto arr = dyn_cast<ArrayAttr>(a)) {
    json::Array out;
    for (Attribute item : arr)
      out.push_back(fromAttribute(item));
    return out;
  }
  if (auto s = dyn_cast<StringAttr>(a))
    return s.getValue().str();
  if (auto i = dyn_cast<IntegerAttr>(a))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(a))
    return f.getValueAsDouble();
  return nullptr;
}

DictionaryAttr Cluster::toAttr(MLIRContext *context) const {
  Builder b(context);
  return cast<DictionaryAttr>(toAttribute(b, toJSON()));
}

std::optional<Cluster> mlir::ober::planning::clusterFromAttr(DictionaryAttr attr,
                                                             std::string &error) {
  return clusterFromJSON(fromAttribute(attr), error);
}

std::optional<AttentionLowering>
AttentionLowering::parse(StringRef kind, int64_t block, std::string &error) {
  AttentionLowering l;
  if (!kind.empty() && !isAttentionKind(kind)) {
    error = "attention='" + kind.str() + "' is not one of " +
            kAttentionKinds.str();
    return std::nullopt;
  }
  if (kind == "fused")
    l.kind = Fused;
  else if (kind == "flash")
    l.kind = Flash;
  else if (kind == "decomposed")
    l.kind = Decomposed;
  if (block < 0) {
    error = "attention-block=" + std::to_string(block) + " is negative";
    return std::nullopt;
  }
  l.blockQueries = block;
  return l;
}

LogicalResult mlir::ober::planning::setLowering(Cluster &cluster,
                                                StringRef attention,
                                                int64_t attentionBlock,
                                                StringRef convolutions,
                                                std::string &error) {
  std::optional<AttentionLowering> lowering =
      AttentionLowering::parse(attention, attentionBlock, error);
  if (!lowering)
    return failure();
  if (!isConvolutionKind(convolutions)) {
    error = "convolutions='" + convolutions.str() + "' is not one of " +
            kConvolutionKinds.str();
    return failure();
  }
  cluster.attention = *lowering;
  cluster.gemmConvolutions = convolutions == kGemmConvolutions;
  return success();
}

int64_t AttentionLowering::blockSize(int64_t queries) const {
  return kind == Decomposed ? queries
         : kind == Flash    ? OBER_ATTENTION_TILE
                            : blockQueries;
}
