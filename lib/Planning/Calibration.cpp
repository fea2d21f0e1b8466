//===- Calibration.cpp - fit a device's figures to measured steps ---------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Calibration.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::ober::planning;

const std::vector<std::string> &mlir::ober::planning::runColumns() {
  static const std::vector<std::string> names = {
      "# GPUs",           "global batch",         "micro batch",
      "hidden size",      "attention heads",      "# layers",
      "sequence length",  "tensor parallelism",   "data parallelism",
      "pipeline parallelism", "iteration time (ms)"};
  return names;
}

std::optional<std::vector<MeasuredRun>>
mlir::ober::planning::readRuns(StringRef text, StringRef fileName,
                               std::string &error) {
  text.consume_front("\xEF\xBB\xBF"); // a byte-order mark
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  auto fail = [&](unsigned line, const std::string &what) {
    error = (fileName + ":" + Twine(line) + ": " + what).str();
    return std::nullopt;
  };
  const std::vector<std::string> &names = runColumns();
  std::vector<int> column(names.size(), -1);
  std::vector<MeasuredRun> runs;
  bool header = false;
  for (auto [i, raw] : llvm::enumerate(lines)) {
    unsigned line = i + 1;
    StringRef l = raw.trim();
    if (l.empty())
      continue;
    SmallVector<StringRef> cells;
    l.split(cells, ',');
    if (!header) {
      for (auto [c, cell] : llvm::enumerate(cells))
        for (auto [k, name] : llvm::enumerate(names))
          if (cell.trim().equals_insensitive(name))
            column[k] = c;
      for (auto [k, name] : llvm::enumerate(names))
        if (column[k] < 0)
          return fail(line, "the header has no column '" + name +
                                "' (columns: " + llvm::join(names, ", ") +
                                ")");
      header = true;
      continue;
    }
    MeasuredRun r;
    r.line = line;
    int64_t *fields[] = {&r.gpus,   &r.globalBatch, &r.microBatch, &r.hidden,
                         &r.heads,  &r.layers,      &r.sequence,   &r.tp,
                         &r.dp,     &r.pp};
    for (size_t k = 0; k < names.size(); ++k) {
      if (static_cast<size_t>(column[k]) >= cells.size())
        return fail(line, "has no value for '" + names[k] + "'");
      StringRef cell = cells[column[k]].trim();
      if (k + 1 == names.size()) {
        double ms;
        if (cell.getAsDouble(ms) || !(ms > 0) || !std::isfinite(ms))
          return fail(line, "'" + names[k] + "' is '" + cell.str() +
                                "', not a positive number of milliseconds");
        r.seconds = ms / 1e3;
      } else if (cell.getAsInteger(10, *fields[k]) || *fields[k] < 1 ||
                 *fields[k] > (int64_t(1) << 30)) {
        return fail(line, "'" + names[k] + "' is '" + cell.str() +
                              "', not a positive integer");
      }
    }
    if (r.gpus > (int64_t(1) << 20) || r.tp > r.gpus || r.dp > r.gpus ||
        r.pp > r.gpus || r.tp * r.dp * r.pp != r.gpus)
      return fail(line, llvm::formatv("tensor x data x pipeline parallelism "
                                      "= {0} x {1} x {2} is not the {3} GPUs",
                                      r.tp, r.dp, r.pp, r.gpus)
                            .str());
    if (r.globalBatch % (r.dp * r.microBatch))
      return fail(line, llvm::formatv("global batch {0} is not a multiple of "
                                      "data parallelism x micro batch = {1}",
                                      r.globalBatch, r.dp * r.microBatch)
                            .str());
    runs.push_back(r);
  }
  if (!header)
    return fail(1, "is empty (a header line and one line per run expected)");
  if (runs.empty())
    return fail(lines.size(), "has no runs after the header");
  return runs;
}

void mlir::ober::planning::predictCases(std::vector<FitCase> &cases) {
  for (FitCase &c : cases)
    c.predicted = evaluate(*c.problem, c.config, c.starts).stepTime;
}

FitError mlir::ober::planning::fitError(const std::vector<FitCase> &cases,
                                        std::optional<bool> heldOut) {
  FitError e;
  for (const FitCase &c : cases) {
    if (heldOut && c.heldOut != *heldOut)
      continue;
    double err = std::fabs(c.predicted / c.run->seconds - 1);
    e.mean += err;
    e.max = std::max(e.max, err);
    ++e.count;
  }
  if (e.count)
    e.mean /= e.count;
  return e;
}

double mlir::ober::planning::fitLoss(const std::vector<FitCase> &cases,
                                     double norm) {
  double sum = 0;
  size_t count = 0;
  for (const FitCase &c : cases)
    if (!c.heldOut) {
      sum += std::pow(std::fabs(c.predicted / c.run->seconds - 1), norm);
      ++count;
    }
  return count ? std::pow(sum / count, 1 / norm) : 0;
}

static std::vector<double> ranksOf(const std::vector<double> &v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]])
      ++j;
    for (size_t k = i; k <= j; ++k)
      r[order[k]] = (i + j) / 2.0;
    i = j + 1;
  }
  return r;
}

double mlir::ober::planning::rankCorrelation(const std::vector<double> &a,
                                             const std::vector<double> &b) {
  std::vector<double> ra = ranksOf(a), rb = ranksOf(b);
  double n = ra.size(), ma = 0, mb = 0;
  for (size_t i = 0; i < ra.size(); ++i)
    ma += ra[i] / n, mb += rb[i] / n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  return va > 0 && vb > 0 ? cov / std::sqrt(va * vb) : 1;
}

namespace {
/// The device with the parameters' values: the GEMM tables (or the matmul
/// efficiency) scaled, capped at the peak.
Device withParameters(const Device &base, ArrayRef<FitParameter> params) {
  Device d = base;
  for (const FitParameter &p : params) {
    if (p.name == "gemm_scale" || p.name == "gemm_depth") {
      // Scaled; or each GEMM's K loop `value` steps longer.
      for (auto &[type, table] : d.gemm) {
        double peak = peakFlopsOf(d, type);
        for (std::vector<double> *grid : {&table.flops, &table.flopsTransposedA}) {
          if (grid->empty())
            continue;
          size_t i = 0;
          for (size_t a = 0; a < table.m.size() * table.n.size(); ++a)
            for (double k : table.k) {
              double &f = (*grid)[i++];
              f = std::min(p.name == "gemm_scale" ? f * p.value
                                                  : f * k / (k + p.value),
                           peak);
            }
        }
      }
    } else if (p.name == "matmul_efficiency") {
      d.matmulEfficiency = p.value;
    } else if (p.name == "launch_overhead") {
      d.launchOverhead = p.value;
    } else if (p.name == "launch_overlap") {
      d.launchOverlap = p.value;
    } else if (p.name == "kernel_overhead") {
      d.kernelOverhead = p.value;
    } else if (p.name == "transfer_overhead") {
      d.transferOverhead = p.value;
    }
  }
  return d;
}
} // namespace

std::vector<FitParameter>
mlir::ober::planning::fitDevice(Cluster &cluster, std::vector<FitCase> &cases,
                                double norm, llvm::raw_ostream *log) {
  const Device base = cluster.device;
  std::vector<FitParameter> params;
  if (!base.gemm.empty()) {
    params.push_back({"gemm_scale", 1, 0.25, 2});
    params.push_back({"gemm_depth", 0, 0, 1024});
  }
  else
    params.push_back({"matmul_efficiency", base.matmulEfficiency, 0.02, 1});
  params.push_back({"launch_overhead", base.launchOverhead, 0, 200e-6});
  params.push_back({"launch_overlap", base.launchOverlap, 0, 1});
  params.push_back({"kernel_overhead", base.kernelOverhead, 0, 50e-6});
  params.push_back({"transfer_overhead", base.transferOverhead, 0, 5e-3});
  auto objective = [&]() {
    Device d = withParameters(base, params);
    std::vector<PlanProblem *> seen;
    for (FitCase &c : cases)
      if (!llvm::is_contained(seen, c.problem.get())) {
        seen.push_back(c.problem.get());
        c.problem->cluster.device = d;
        c.problem->matmulSeconds.clear();
      }
    predictCases(cases);
    return fitLoss(cases, norm);
  };
  double best = objective();
  // Coordinate search: a scan of each parameter's range, then a golden
  // section around the best point of the scan; rounds until no gain.
  constexpr int kScan = 12, kRounds = 16, kGolden = 24;
  for (int round = 0; round < kRounds; ++round) {
    double before = best;
    for (FitParameter &p : params) {
      double step = (p.hi - p.lo) / kScan;
      double at = p.value;
      for (int i = 0; i <= kScan; ++i) {
        p.value = p.lo + i * step;
        if (double e = objective(); e < best)
          best = e, at = p.value;
      }
      double lo = std::max(p.lo, at - step), hi = std::min(p.hi, at + step);
      const double g = (std::sqrt(5.0) - 1) / 2;
      double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
      p.value = x1;
      double f1 = objective();
      p.value = x2;
      double f2 = objective();
      for (int i = 0; i < kGolden; ++i) {
        if (f1 < f2) {
          hi = x2, x2 = x1, f2 = f1, x1 = hi - g * (hi - lo);
          p.value = x1, f1 = objective();
        } else {
          lo = x1, x1 = x2, f1 = f2, x2 = lo + g * (hi - lo);
          p.value = x2, f2 = objective();
        }
      }
      if (std::min(f1, f2) < best)
        best = std::min(f1, f2), at = f1 < f2 ? x1 : x2;
      p.value = at;
    }
    if (log) {
      *log << llvm::format("fit round %d: L%g error %.4f", round + 1, norm,
                           best);
      for (const FitParameter &p : params)
        *log << "  " << p.name << "=" << llvm::format("%.4g", p.value);
      *log << "\n";
    }
    if (before - best < 1e-5)
      break;
  }
  objective(); // leave every case at the fitted values
  cluster.device = withParameters(base, params);
  return params;
}
