//===- KernelTables.cpp - measured kernel and collective speeds -----------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/KernelTables.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir::ober::planning;
namespace json = llvm::json;

namespace {
/// Where `v` falls on the ascending axis `xs`: the two neighbours and the
/// weight of the upper one, linear in log v, clamped to the ends.
struct Bracket {
  size_t lo = 0, hi = 0;
  double weight = 0;
};

Bracket bracket(const std::vector<double> &xs, double v) {
  if (xs.size() < 2 || v <= xs.front())
    return {0, 0, 0};
  if (v >= xs.back())
    return {xs.size() - 1, xs.size() - 1, 0};
  size_t hi = std::upper_bound(xs.begin(), xs.end(), v) - xs.begin();
  size_t lo = hi - 1;
  double w = std::log(v / xs[lo]) / std::log(xs[hi] / xs[lo]);
  return {lo, hi, w};
}
} // namespace

double Curve::at(double v) const {
  if (x.empty())
    return 0;
  Bracket b = bracket(x, v);
  return y[b.lo] + (y[b.hi] - y[b.lo]) * b.weight;
}

double GemmTable::rate(double M, double N, double K, bool transposedA) const {
  if (empty())
    return 0;
  const std::vector<double> &grid =
      transposedA && !flopsTransposedA.empty() ? flopsTransposedA : flops;
  Bracket bm = bracket(m, M), bn = bracket(n, N), bk = bracket(k, K);
  auto at = [&](size_t i, size_t j, size_t l) {
    return grid[(i * n.size() + j) * k.size() + l];
  };
  double r = 0;
  for (auto [i, wi] : {std::pair(bm.lo, 1 - bm.weight), {bm.hi, bm.weight}})
    for (auto [j, wj] : {std::pair(bn.lo, 1 - bn.weight), {bn.hi, bn.weight}})
      for (auto [l, wl] :
           {std::pair(bk.lo, 1 - bk.weight), {bk.hi, bk.weight}})
        r += wi * wj * wl * at(i, j, l);
  // Smaller than anything measured: as long as the smallest.
  for (auto [v, axis] : {std::pair(M, &m), {N, &n}, {K, &k}})
    if (v > 0 && v < axis->front())
      r *= v / axis->front();
  return r;
}

double BusBandwidthTable::smallestBytes(int64_t group) const {
  auto it = byGroup.lower_bound(group);
  if (it == byGroup.end())
    it = std::prev(it);
  return it->second.x.front();
}

double BusBandwidthTable::at(double bytes, int64_t group) const {
  if (byGroup.empty())
    return 0;
  auto hi = byGroup.lower_bound(group);
  if (hi == byGroup.end())
    return std::prev(hi)->second.at(bytes);
  if (hi->first == group || hi == byGroup.begin())
    return hi->second.at(bytes);
  auto lo = std::prev(hi);
  double w = std::log(double(group) / lo->first) /
             std::log(double(hi->first) / lo->first);
  return lo->second.at(bytes) * (1 - w) + hi->second.at(bytes) * w;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

json::Value mlir::ober::planning::toJSON(const Curve &c, const char *xKey,
                                         const char *yKey) {
  return json::Object{{xKey, json::Array(c.x)}, {yKey, json::Array(c.y)}};
}

json::Value mlir::ober::planning::toJSON(const GemmTable &t) {
  json::Object o{{"m", json::Array(t.m)},
                 {"n", json::Array(t.n)},
                 {"k", json::Array(t.k)},
                 {"flops", json::Array(t.flops)}};
  if (!t.flopsTransposedA.empty())
    o["flops_transposed_a"] = json::Array(t.flopsTransposedA);
  return o;
}

json::Value mlir::ober::planning::toJSON(const BusBandwidthTable &t) {
  json::Array out;
  for (const auto &[group, curve] : t.byGroup) {
    json::Value v = toJSON(curve, "bytes", "bandwidth");
    v.getAsObject()->try_emplace("group_size", group);
    out.push_back(std::move(v));
  }
  return out;
}

namespace {
bool fail(std::string &error, const std::string &field, const std::string &what) {
  if (error.empty())
    error = field + ": " + what;
  return false;
}

/// Reads `key` of `o` as a non-empty array of numbers in [lo, hi],
/// ascending when `ascending`.
bool numbers(const json::Object &o, const std::string &path, const char *key,
             double lo, double hi, bool ascending, std::vector<double> &out,
             std::string &error) {
  std::string field = path + "." + key;
  const json::Array *a = o.getArray(key);
  if (!a || a->empty())
    return fail(error, field, "must be a non-empty array of numbers");
  for (auto [i, v] : llvm::enumerate(*a)) {
    std::optional<double> d = v.getAsNumber();
    std::string at = field + "[" + std::to_string(i) + "]";
    if (!d)
      return fail(error, at, "must be a number");
    if (!(*d >= lo && *d <= hi))
      return fail(error, at,
                  llvm::formatv("{0:e3} is not between {1:e2} and {2:e2}", *d,
                                lo, hi)
                      .str());
    if (ascending && !out.empty() && *d <= out.back())
      return fail(error, at, "must be larger than the value before it "
                             "(sizes go in ascending order)");
    out.push_back(*d);
  }
  return true;
}

bool onlyKeys(const json::Object &o, const std::string &path,
              std::initializer_list<llvm::StringRef> keys, std::string &error) {
  for (const auto &entry : o)
    if (!llvm::is_contained(keys, llvm::StringRef(entry.first)))
      return fail(error, path + "." + entry.first.str(),
                  "is not a known key (accepted: " + llvm::join(keys, ", ") +
                      ")");
  return true;
}

// Plausible sizes and speeds: beyond these a figure is a unit mistake.
constexpr double kMaxSize = 1e15, kMinRate = 1e3, kMaxRate = 1e18;
} // namespace

bool mlir::ober::planning::curveFromJSON(const json::Value &v,
                                         const std::string &path,
                                         const char *xKey, const char *yKey,
                                         double lo, double hi, Curve &out,
                                         std::string &error) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return fail(error, path, std::string("must be an object with '") + xKey +
                                 "' and '" + yKey + "' arrays");
  if (!onlyKeys(*o, path, {xKey, yKey}, error) ||
      !numbers(*o, path, xKey, 1, kMaxSize, true, out.x, error) ||
      !numbers(*o, path, yKey, lo, hi, false, out.y, error))
    return false;
  if (out.x.size() != out.y.size())
    return fail(error, path + "." + yKey,
                llvm::formatv("has {0} values for {1} sizes in '{2}'",
                              out.y.size(), out.x.size(), xKey)
                    .str());
  return true;
}

bool mlir::ober::planning::gemmTableFromJSON(const json::Value &v,
                                             const std::string &path,
                                             GemmTable &out,
                                             std::string &error) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return fail(error, path,
                "must be an object with 'm', 'n', 'k' and 'flops' arrays");
  if (!onlyKeys(*o, path, {"m", "n", "k", "flops", "flops_transposed_a"},
                error) ||
      !numbers(*o, path, "m", 1, kMaxSize, true, out.m, error) ||
      !numbers(*o, path, "n", 1, kMaxSize, true, out.n, error) ||
      !numbers(*o, path, "k", 1, kMaxSize, true, out.k, error) ||
      !numbers(*o, path, "flops", kMinRate, kMaxRate, false, out.flops, error))
    return false;
  if (o->get("flops_transposed_a") &&
      !numbers(*o, path, "flops_transposed_a", kMinRate, kMaxRate, false,
               out.flopsTransposedA, error))
    return false;
  size_t cells = out.m.size() * out.n.size() * out.k.size();
  for (auto [key, values] : {std::pair("flops", &out.flops),
                             {"flops_transposed_a", &out.flopsTransposedA}})
    if (values->size() != cells &&
        !(values->empty() && values == &out.flopsTransposedA))
      return fail(error, path + "." + key,
                  llvm::formatv("has {0} values; the grid of {1} x {2} x {3} "
                                "sizes needs {4} (m-major)",
                                values->size(), out.m.size(), out.n.size(),
                                out.k.size(), cells)
                      .str());
  return true;
}

bool mlir::ober::planning::busBandwidthFromJSON(const json::Value &v,
                                                const std::string &path,
                                                BusBandwidthTable &out,
                                                std::string &error) {
  const json::Array *a = v.getAsArray();
  if (!a)
    return fail(error, path,
                "must be an array of {group_size, bytes, bandwidth} objects");
  for (auto [i, item] : llvm::enumerate(*a)) {
    std::string at = path + "[" + std::to_string(i) + "]";
    const json::Object *o = item.getAsObject();
    if (!o)
      return fail(error, at, "must be an object");
    std::optional<int64_t> group = o->getInteger("group_size");
    if (!group || *group < 2)
      return fail(error, at + ".group_size",
                  "must be an integer of at least 2");
    if (out.byGroup.count(*group))
      return fail(error, at + ".group_size",
                  "group size " + std::to_string(*group) +
                      " is measured twice");
    json::Object rest = *o;
    rest.erase("group_size");
    Curve c;
    if (!curveFromJSON(json::Value(std::move(rest)), at, "bytes", "bandwidth",
                       kMinRate, kMaxRate, c, error))
      return false;
    out.byGroup[*group] = std::move(c);
  }
  return true;
}
