//===- KernelTimes.h - device time by kernel name ------------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//
//
// The table `--profile-kernels` prints: the device time of each kernel
// and library call, summed by name. Filled by a target's profiler (CUDA:
// KernelProfile.h); kept apart from it so that it is tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_KERNELTIMES_H
#define OBER_RUNTIME_KERNELTIMES_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

namespace ober::rt {

class KernelTimes {
public:
  struct Row {
    std::string name;
    int64_t calls = 0;
    double milliseconds = 0;
  };

  void add(const std::string &name, double milliseconds);
  /// Every name, the most time first (ties by name).
  std::vector<Row> rows() const;
  double totalMilliseconds() const { return total; }

  /// Writes the `top` names with the most time to `out`: per step (over
  /// `steps`), their share of the device time, and the device time's
  /// share of `wallSeconds` (the steps' time on the host clock; 0: none).
  void print(std::FILE *out, const std::string &title, int64_t steps,
             double wallSeconds, size_t top = 30) const;

private:
  std::unordered_map<std::string, size_t> index;
  std::vector<Row> byName;
  double total = 0;
};

} // namespace ober::rt

#endif // OBER_RUNTIME_KERNELTIMES_H
