//===- PlanHTML.cpp - the plan as a page to look at -----------------------===//
//
// Part of Ober-Train. `--ober-plan-report=plan.html`: one self-contained
// page (inline CSS and SVG, no script, nothing fetched) with the plan table,
// the pipeline timeline the cost model simulated (devices x time: forward,
// backward and weight-gradient passes, the tensor-parallel collectives in
// them, the data-parallel reduction, idle time), memory per stage as bars,
// the collectives with their reasons, and the runners-up. Its figures are
// the JSON report's (reportJSON), so the two cannot disagree.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ober::planning;
namespace json = llvm::json;

namespace {
std::string escape(StringRef s) {
  std::string out;
  for (char c : s)
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  return out;
}

std::string seconds(double s) {
  if (s >= 1)
    return llvm::formatv("{0:f3} s", s).str();
  if (s >= 1e-3)
    return llvm::formatv("{0:f3} ms", s * 1e3).str();
  return llvm::formatv("{0:f1} us", s * 1e6).str();
}

/// The configuration of a plan in one line.
std::string describe(const PlanConfig &c) {
  std::string s = llvm::formatv("tp {0} &middot; pp {1} &middot; dp {2} "
                                "&middot; micro-batch {3} x {4} &middot; {5}",
                                c.tp, c.pp, c.dp, c.microBatch,
                                c.numMicroBatches,
                                stringifySchedule(c.schedule))
                      .str();
  if (c.chunks > 1)
    s += llvm::formatv(" ({0} chunks)", c.chunks).str();
  s += " &middot; recompute " + describeRecompute(c);
  if (c.sequenceParallel)
    s += " &middot; sequence-parallel";
  s += llvm::formatv(" &middot; ZeRO-{0}", c.zeroStage).str();
  return s;
}

constexpr const char *kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d232a;max-width:1280px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px;border-bottom:1px solid #e3e6ea;text-align:right}
th{background:#f3f5f7}td.l,th.l{text-align:left}.muted{color:#68717b}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-1px}
svg text{font:11px system-ui,sans-serif;fill:#1d232a}
)";

/// Colours of the timeline and the memory bars.
constexpr const char *kForward = "#4e79a7", *kBackward = "#f28e2b",
                     *kWeight = "#59a14f", *kComm = "#b3475e",
                     *kIdle = "#eef0f2";

/// The timeline picture. A plan of many micro-batches is drawn with
/// enough of them to show warm-up, steady state and drain.
void timelineSVG(const PlanProblem &problem, const PlanEstimate &plan,
                 raw_ostream &os) {
  const PlanConfig &c = plan.config;
  unsigned p = c.pp, v = c.pp > 1 ? std::max<int64_t>(c.chunks, 1) : 1;
  unsigned m = c.numMicroBatches;
  unsigned drawn = m;
  constexpr unsigned kMaxPasses = 6000;
  if (size_t(2) * m * p * v > kMaxPasses) {
    drawn = std::max<unsigned>(kMaxPasses / (2 * p * v), 2 * p);
    drawn = std::min(drawn, m);
    if (v > 1 && m % p == 0) // keep the interleaved order's rounds
      drawn = std::max<unsigned>(p, drawn / p * p);
  }
  Timeline t = simulatePipeline(c.schedule, p, drawn, v, plan.chunkTimes,
                                /*keepEvents=*/true);
  if (!std::isfinite(t.makespan) || t.makespan <= 0)
    return;
  if (drawn < m)
    os << "<p class=muted>The first " << drawn << " of " << m
       << " micro-batches (the steady state repeats).</p>\n";
  // The data-parallel reduction each device runs after its last pass
  // (its exposed part), as the step-time estimate has it.
  double exposedEnd = t.makespan + (drawn == m ? plan.dpCommExposed : 0);
  double width = 1100, left = 70, row = 26, top = 8;
  double scale = (width - left - 10) / std::max(exposedEnd, t.makespan);
  double height = top + p * row + 34;
  os << llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' "
                      "height='{1}' role='img' aria-label='pipeline "
                      "timeline'>\n",
                      width, height);
  for (unsigned d = 0; d < p; ++d) {
    double y = top + d * row;
    os << llvm::formatv("<text x='4' y='{0}'>device {1}</text>", y + 16, d)
       << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' "
                        "fill='{4}'/>\n",
                        left, y + 2, t.makespan * scale, row - 6, kIdle);
  }
  for (const TimelineEvent &e : t.events) {
    double y = top + e.device * row + 2, x = left + e.start * scale;
    double w = std::max(0.5, (e.end - e.start) * scale);
    const char *fill = e.kind == ober::PipelinePass::Forward ? kForward
                       : e.kind == ober::PipelinePass::Backward ? kBackward
                                                                : kWeight;
    const char *what = e.kind == ober::PipelinePass::Forward ? "forward"
                       : e.kind == ober::PipelinePass::Backward ? "backward"
                                                                : "weight gradients";
    os << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' "
                        "fill='{4}' stroke='#fff' stroke-width='0.5'><title>"
                        "{5} of micro-batch {6}, chunk {7}: {8} to {9}"
                        "</title></rect>",
                        x, y, w, row - 6, fill, what, e.microBatch, e.chunk,
                        seconds(e.start), seconds(e.end));
    // The tensor-parallel collectives inside the pass, at its end.
    const ChunkTimes &ct = plan.chunkTimes[e.chunk * p + e.device];
    double pass = e.kind == ober::PipelinePass::Forward ? ct.forward
                  : e.kind == ober::PipelinePass::Backward
                      ? ct.backward
                      : ct.weight;
    double stage = plan.stages[e.device].tpComm /
                   std::max<size_t>(1, plan.stages[e.device].chunks.size());
    double comm = e.kind == ober::PipelinePass::Weight ? 0 : stage / 2;
    if (comm > 0 && pass > 0) {
      double cw = std::min(w, comm / pass * w);
      os << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' "
                          "fill='{4}'/>",
                          x + w - cw, y + row - 12, cw, 6, kComm);
    }
    os << "\n";
  }
  if (drawn == m && plan.dpCommExposed > 0)
    for (unsigned d = 0; d < p; ++d)
      os << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' "
                          "fill='{4}'><title>data-parallel reduction (its "
                          "exposed part)</title></rect>\n",
                          left + t.makespan * scale, top + d * row + 2,
                          plan.dpCommExposed * scale, row - 6, kComm);
  // A time axis.
  double axisY = top + p * row + 4;
  for (int i = 0; i <= 5; ++i) {
    double at = exposedEnd * i / 5;
    const char *anchor = i == 0 ? "start" : i == 5 ? "end" : "middle";
    os << llvm::formatv("<text x='{0}' y='{1}' text-anchor='{2}'>{3}</text>",
                        left + at * scale, axisY + 14, anchor,
                        i == 0 ? std::string("0") : seconds(at));
  }
  os << "\n</svg>\n";
  os << "<div class=legend>"
     << llvm::formatv("<span><i style='background:{0}'></i>forward</span>",
                      kForward)
     << llvm::formatv("<span><i style='background:{0}'></i>backward (with "
                      "recomputation)</span>",
                      kBackward)
     << llvm::formatv("<span><i style='background:{0}'></i>weight gradients "
                      "(zero-bubble)</span>",
                      kWeight)
     << llvm::formatv("<span><i style='background:{0}'></i>communication "
                      "(tensor-parallel in each pass; the data-parallel "
                      "reduction after)</span>",
                      kComm)
     << llvm::formatv("<span><i style='background:{0}'></i>idle</span>", kIdle)
     << "</div>\n";
}

/// Memory per stage as stacked bars against the limit.
void memorySVG(const PlanProblem &problem, const PlanEstimate &plan,
               raw_ostream &os) {
  const char *colours[] = {"#4e79a7", "#a0cbe8", "#f28e2b", "#59a14f",
                           "#edc948"};
  const char *names[] = {"parameters", "gradients", "optimizer state",
                         "activations", "working set"};
  double most = problem.memoryLimit;
  for (const StageEstimate &st : plan.stages)
    most = std::max(most, st.memory.total());
  if (!std::isfinite(most) || most <= 0)
    return;
  double width = 1100, left = 70, row = 24, top = 6;
  double scale = (width - left - 90) / most;
  double height = top + plan.stages.size() * row + 10;
  os << llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' "
                      "height='{1}' role='img' aria-label='memory per "
                      "stage'>\n",
                      width, height);
  for (auto [j, st] : llvm::enumerate(plan.stages)) {
    double y = top + j * row, x = left;
    const StageMemory &mem = st.memory;
    double parts[] = {mem.parameters, mem.gradients, mem.optimizer,
                      mem.activations, mem.working};
    os << llvm::formatv("<text x='4' y='{0}'>stage {1}</text>", y + 15, j);
    for (int k = 0; k < 5; ++k) {
      double w = parts[k] * scale;
      os << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' "
                          "fill='{4}'><title>{5}: {6}</title></rect>",
                          x, y + 2, w, row - 6, colours[k], names[k],
                          formatBytes(parts[k]));
      x += w;
    }
    os << llvm::formatv("<text x='{0}' y='{1}'>{2}</text>\n", x + 6, y + 15,
                        formatBytes(mem.total()));
  }
  double limitX = left + problem.memoryLimit * scale;
  os << llvm::formatv("<line x1='{0}' x2='{0}' y1='0' y2='{1}' "
                      "stroke='#e15759' stroke-dasharray='4 3'><title>limit "
                      "{2}</title></line>\n",
                      limitX, height, formatBytes(problem.memoryLimit));
  os << "</svg>\n<div class=legend>";
  for (int k = 0; k < 5; ++k)
    os << llvm::formatv("<span><i style='background:{0}'></i>{1}</span>",
                        colours[k], names[k]);
  os << "<span><i style='background:#e15759'></i>the device's limit ("
     << formatBytes(problem.memoryLimit) << ")</span></div>\n";
}
} // namespace

void mlir::ober::planning::writePlanHTML(const PlanProblem &problem,
                                         const PlanEstimate &plan,
                                         ArrayRef<PlanEstimate> alternatives,
                                         double planSeconds, int64_t evaluated,
                                         raw_ostream &os) {
  json::Object report =
      reportJSON(problem, plan, alternatives, planSeconds, evaluated);
  auto number = [&](StringRef key) {
    return report.getNumber(key).value_or(0);
  };
  const json::Object *breakdown = report.getObject("breakdown");
  auto part = [&](StringRef key) {
    return breakdown ? breakdown->getNumber(key).value_or(0) : 0;
  };
  os << "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
     << "<title>ober plan: " << escape(problem.cluster.name) << "</title>"
     << "<style>" << kStyle << "</style></head><body>\n";
  os << "<h1>ober plan for " << problem.cluster.numDevices() << " &times; "
     << escape(problem.cluster.device.name) << " ("
     << escape(problem.cluster.name) << ")</h1>\n";
  os << "<p class=muted>global batch " << problem.globalBatch << ", "
     << escape(problem.precision) << "; "
     << llvm::formatv("{0} plans evaluated in {1:f3} s", evaluated, planSeconds)
     << "</p>\n";
  os << "<p><b>" << describe(plan.config) << "</b></p>\n";
  os << "<table><tr><th class=l>step time</th><th>model TFLOP/s per "
        "device</th><th>hardware TFLOP/s per device</th><th>MFU</th><th>peak "
        "memory</th></tr>"
     << llvm::formatv("<tr><td class=l>{0}</td><td>{1:f1}</td><td>{2:f1}</td>"
                      "<td>{3:f1}%</td><td>{4} of {5} (stage {6})</td></tr>"
                      "</table>\n",
                      seconds(plan.stepTime), number("model_tflops_per_gpu"),
                      number("hardware_tflops_per_gpu"), 100 * number("mfu"),
                      formatBytes(plan.peakMemory),
                      formatBytes(problem.memoryLimit), plan.peakStage);
  os << "<table><tr><th class=l>where the step's time goes</th><th>"
        "seconds</th></tr>";
  for (auto [name, key] :
       {std::pair("compute (busiest device)", "compute_s"),
        {"exposed communication", "exposed_communication_s"},
        {"&nbsp;&nbsp;tensor-parallel", "tensor_parallel_communication_s"},
        {"&nbsp;&nbsp;data-parallel, not hidden", "data_parallel_exposed_s"},
        {"pipeline idle (bubble, transfers)", "bubble_s"},
        {"optimizer update", "optimizer_s"}})
    os << "<tr><td class=l>" << name << "</td><td>" << seconds(part(key))
       << "</td></tr>";
  os << "</table>\n";

  os << "<h2>Pipeline timeline</h2>\n";
  timelineSVG(problem, plan, os);

  os << "<h2>Stages</h2>\n<table><tr><th>stage</th><th class=l>segments</th>"
        "<th>forward / micro-batch</th><th>backward / micro-batch</th>"
        "<th>micro-batches in flight</th><th>memory</th></tr>";
  for (auto [j, st] : llvm::enumerate(plan.stages)) {
    std::string segs;
    for (auto [first, end] : st.chunks)
      segs += (segs.empty() ? "" : ", ") + std::to_string(first) + "&ndash;" +
              std::to_string(end - 1);
    os << llvm::formatv("<tr><td>{0}</td><td class=l>{1}</td><td>{2}</td>"
                        "<td>{3}</td><td>{4}</td><td>{5}</td></tr>",
                        j, segs, seconds(st.forward), seconds(st.backward),
                        st.inFlight, formatBytes(st.memory.total()));
  }
  os << "</table>\n<h2>Memory per stage</h2>\n";
  memorySVG(problem, plan, os);

  os << "<h2>Collectives</h2>\n<table><tr><th class=l>scope</th><th "
        "class=l>kind</th><th>stage</th><th>group</th><th>bytes</th><th>per "
        "step</th><th class=l>why</th></tr>";
  for (const PlannedCollective &col : plannedCollectives(problem, plan))
    os << "<tr><td class=l>" << escape(col.scope) << "</td><td class=l>"
       << escape(col.kind) << "</td><td>" << col.stage << "</td><td>"
       << col.groupSize << "</td><td>" << formatBytes(col.bytes) << "</td><td>"
       << col.perStep
       << (col.everySteps > 1
               ? " / " + std::to_string(col.everySteps) + " steps"
               : std::string())
       << "</td><td class=l>" << escape(col.reason) << " <span class=muted>("
       << escape(col.where) << ")</span></td></tr>\n";
  os << "</table>\n";

  os << "<h2>Alternatives</h2>\n";
  if (alternatives.empty()) {
    os << "<p class=muted>No other plan fits.</p>\n";
  } else {
    os << "<table><tr><th class=l>plan</th><th>step time</th><th>vs the "
          "chosen</th></tr>";
    for (const PlanEstimate &alt : alternatives)
      os << "<tr><td class=l>" << describe(alt.config) << "</td><td>"
         << seconds(alt.stepTime) << "</td><td>"
         << llvm::formatv("+{0:f1}%", 100 * (alt.stepTime / plan.stepTime - 1))
         << "</td></tr>";
    os << "</table>\n";
  }
  os << "</body></html>\n";
}
