//===- KernelTimes.cpp - device time by kernel name -----------------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/KernelTimes.h"

#include <algorithm>

using namespace ober::rt;

void KernelTimes::add(const std::string &name, double milliseconds) {
  auto [it, fresh] = index.try_emplace(name, byName.size());
  if (fresh)
    byName.push_back({name, 0, 0});
  Row &row = byName[it->second];
  ++row.calls;
  row.milliseconds += milliseconds;
  total += milliseconds;
}

std::vector<KernelTimes::Row> KernelTimes::rows() const {
  std::vector<Row> sorted = byName;
  std::sort(sorted.begin(), sorted.end(), [](const Row &a, const Row &b) {
    return a.milliseconds != b.milliseconds ? a.milliseconds > b.milliseconds
                                            : a.name < b.name;
  });
  return sorted;
}

void KernelTimes::print(std::FILE *out, const std::string &title,
                        int64_t steps, double wallSeconds, size_t top) const {
  double per = static_cast<double>(std::max<int64_t>(steps, 1));
  int64_t calls = 0;
  for (const Row &r : byName)
    calls += r.calls;
  std::fprintf(out, "%s: %.3f ms of device time a step in %.0f calls",
               title.c_str(), total / per, calls / per);
  if (wallSeconds > 0)
    std::fprintf(out, " (%.1f%% of the steps' %.3f s)",
                 100 * total / 1e3 / wallSeconds, wallSeconds / per);
  std::fprintf(out, "\n  %10s %6s %10s  %s\n", "ms/step", "share", "calls/step",
               "kernel");
  std::vector<Row> sorted = rows();
  for (size_t i = 0; i < sorted.size() && i < top; ++i) {
    const Row &r = sorted[i];
    std::fprintf(out, "  %10.3f %5.1f%% %10.1f  %s\n", r.milliseconds / per,
                 total > 0 ? 100 * r.milliseconds / total : 0.0,
                 r.calls / per, r.name.c_str());
  }
  if (sorted.size() > top)
    std::fprintf(out, "  (%zu more)\n", sorted.size() - top);
}
