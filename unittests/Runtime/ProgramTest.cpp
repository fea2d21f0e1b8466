//===- ProgramTest.cpp - the compiled program's manifest ------------------===//
//
// Part of Ober-Train. The manifest ober-compile writes and an executable
// reads: a round trip, and the errors a damaged one gets; which part of an
// input file feeds each step (Batches.h).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Batches.h"
#include "ober/Runtime/Program.h"

#include "../TestSupport.h"

#include <string>

using namespace ober::rt;

namespace {

Program sample() {
  Program p;
  p.kind = Program::Train;
  p.model = "mlp.onnx";
  p.weights = "train.safetensors";
  ProgramArg w;
  w.role = ArgRole::Parameter;
  w.name = "fc.weight";
  w.shape = {4, 3};
  w.init = InitKind::Normal;
  w.initKey = 18446744073709551557ull; // above int64's range
  w.readBy = {1};
  ProgramArg x;
  x.role = ArgRole::Batch;
  x.name = "x";
  x.dtype = DType::BF16;
  x.shape = {8, 3};
  x.split = {{1, -1}, {1, 1}}; // the batch over grid axis 1
  ProgramArg y;
  y.role = ArgRole::Batch;
  y.name = "target";
  y.dtype = DType::I64;
  y.shape = {8};
  y.indices = {0, 5, true, -100, "the class targets"};
  p.args = {w, x, y};
  p.grid = {2, 2};
  p.pipelineAxis = 0;
  p.stages = 2;
  p.groups = {{1}, {0, 1}};
  p.transfers = {{0, 1}, {1, 0}};
  ProgramResult loss;
  loss.role = ResultRole::Loss;
  loss.inPlace = {-1, -1};
  loss.stage = 1;
  ProgramResult nw;
  nw.role = ResultRole::Parameter;
  nw.arg = 0;
  nw.shape = {4, 3};
  nw.inPlace = {0, -1};
  nw.stage = 1;
  ProgramResult norm;
  norm.role = ResultRole::GradNorm;
  norm.inPlace = {-1, -1};
  norm.stage = 1;
  p.results = {loss, nw, norm};
  p.kernels = {{"ober_rt_cpu_matmul", {1, 1, 1, 8, 4, 3, 0, 1}},
               {"ober_rt_cpu_conv", {2, -1}}};
  return p;
}

void roundTrip() {
  Program p = sample(), q;
  std::string error;
  EXPECT(readProgram(writeProgram(p), q, error));
  EXPECT(error.empty());
  EXPECT(q.kind == Program::Train && q.model == p.model &&
         q.weights == p.weights);
  EXPECT(q.args.size() == 3 && q.args[0].initKey == p.args[0].initKey &&
         q.args[0].shape == p.args[0].shape && q.args[1].dtype == DType::BF16 &&
         q.args[1].role == ArgRole::Batch);
  EXPECT(q.results.size() == 3 && q.results[1].inPlaceIn(0) == 0 &&
         q.results[1].inPlaceIn(1) == -1 && q.results[0].inPlaceIn(0) == -1 &&
         q.results[0].role == ResultRole::Loss && q.results[0].stage == 1 &&
         q.results[1].stage == 1 &&
         q.results[2].role == ResultRole::GradNorm);
  EXPECT(q.returns(ResultRole::GradNorm) && !q.returns(ResultRole::Output));
  // Stage 0 returns the parameter in place, unread: it never touches it.
  EXPECT(q.args[0].readBy == std::vector<int64_t>{1});
  EXPECT(!q.touches(0, 0) && q.touches(1, 0) && q.touches(0, 1));
  EXPECT(q.grid == p.grid && q.pipelineAxis == 0 && q.stages == 2 &&
         q.groups == p.groups && q.transfers == p.transfers &&
         q.devices() == 4);
  EXPECT(q.args[1].split.axes == p.args[1].split.axes &&
         q.args[1].split.groups == p.args[1].split.groups &&
         q.args[0].split.isWhole());
  EXPECT(q.kernels.size() == 2 && q.kernels[0].name == "ober_rt_cpu_matmul" &&
         q.kernels[0].desc == p.kernels[0].desc &&
         q.kernels[1].desc == p.kernels[1].desc);
  EXPECT(q.argsWith(ArgRole::Batch) == (std::vector<size_t>{1, 2}));
  const IndexRange &r = q.args[2].indices;
  EXPECT(r.low == 0 && r.high == 5 && r.hasIgnored && r.ignored == -100 &&
         r.use == "the class targets");
  EXPECT(q.args[1].indices.high == q.args[1].indices.low);
}

/// An index range names the first value outside it, and where.
void indexRanges() {
  IndexRange r{-3, 3, true, -100, "the rows"};
  std::vector<int64_t> fine = {-3, 2, -100, 0, 1, 2};
  EXPECT(r.check(DType::I64, reinterpret_cast<const char *>(fine.data()),
                 {2, 3})
             .empty());
  std::vector<int64_t> bad = {0, 1, 2, 3, -4, 0};
  std::string why = r.check(
      DType::I64, reinterpret_cast<const char *>(bad.data()), {2, 3});
  EXPECT(why == "value 3 at [1, 0] is outside [-3, 3) (or -100, ignored): "
                "the rows");
  std::vector<int32_t> narrow = {1, -4};
  EXPECT(r.check(DType::I32, reinterpret_cast<const char *>(narrow.data()),
                 {2}) == "value -4 at [1] is outside [-3, 3) (or -100, "
                         "ignored): the rows");
}

/// Reading `text` fails with an error containing `expected`.
void rejects(const std::string &text, const std::string &expected) {
  Program q;
  std::string error;
  bool ok = readProgram(text, q, error);
  EXPECT(!ok);
  if (error.find(expected) == std::string::npos) {
    std::fprintf(stderr, "error '%s' lacks '%s'\n", error.c_str(),
                 expected.c_str());
    ++testFailures();
  }
}

std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT(at != std::string::npos);
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

void errors() {
  std::string good = writeProgram(sample());
  rejects("{", "program manifest");
  rejects("[]", "not an object");
  rejects(replaced(good, "\"version\": 3", "\"version\": 99"), "version 99");
  rejects(replaced(good, "\"kind\": \"train\"", "\"kind\": \"eval\""),
          "unknown kind 'eval'");
  rejects(replaced(good, "\"kernels\"", "\"kernelz\""),
          "missing or malformed 'kernels'");
  rejects(replaced(good, "[2,-1]", "[2,\"x\"]"),
          "kernel #1: desc [2,\"x\"] is not a list of integers");
  rejects(replaced(good, "\"name\": \"ober_rt_cpu_conv\"", "\"name\": 3"),
          "kernel #1: missing or malformed 'name'");
  rejects(replaced(good, "\"shape\": [8,3]", "\"shape\": [8,-3]"),
          "argument #1: shape [8,-3] is not a list of sizes");
  rejects(replaced(good, "\"role\": \"batch\"", "\"role\": \"label\""),
          "argument #1: unknown role 'label'");
  rejects(replaced(good, "\"dtype\": \"BF16\"", "\"dtype\": \"Q4\""),
          "unknown dtype 'Q4'");
  rejects(replaced(good, "\"in_place\": [0,-1]", "\"in_place\": [1,-1]"),
          "result #1: in_place names no argument of the result's type");
  rejects(replaced(good, "\"in_place\": [0,-1]", "\"in_place\": [0]"),
          "result #1: in_place needs an entry per stage");
  rejects(replaced(good, "\"split\": [1,-1]", "\"split\": [2,-1]"),
          "argument #1: split names grid axis 2 of 2");
  rejects(replaced(good, "\"stages\": 2", "\"stages\": 3"),
          "pipeline_axis 0 and 3 stage(s) do not fit grid [2,2]");
  rejects(
      replaced(good, "\"groups\": [[1], [0,1]]", "\"groups\": [[1], [0,7]]"),
      "group [0,7] names an axis the grid lacks");
  rejects(replaced(good, "\"transfers\": [[0,1], [1,0]]",
                   "\"transfers\": [[0,1], [1,1]]"),
          "transfer [1,1] is not a pair of distinct stages below 2");
  rejects(replaced(good, "\"transfers\": [[0,1], [1,0]]",
                   "\"transfers\": [[0,1], [2,0]]"),
          "transfer [2,0] is not a pair of distinct stages below 2");
  rejects(replaced(good, "\"stage\": 1", "\"stage\": 2"),
          "result #0: stage 2 is not a stage");
  rejects(replaced(good, "\"low\": 0, \"high\": 5", "\"low\": 5, \"high\": 5"),
          "argument #2: indices {");
  rejects(replaced(good, "\"dtype\": \"I64\"", "\"dtype\": \"F32\""),
          "are not a range {low, high} of an integer input");
  rejects(replaced(good, "\"read_by\": [1]", "\"read_by\": [5]"),
          "argument #0: read_by [5] is not a list of stages");
  rejects(replaced(good, "\"role\": \"param\", \"arg\": 0",
                   "\"role\": \"param\", \"arg\": 5"),
          "result #1: updates argument #5");
}

/// An argument [micro-batches 2, samples 3, 4] is fed by a file of its
/// shape, of [6, 4], or of either with a leading steps dimension.
void batches() {
  std::vector<int64_t> arg = {2, 3, 4};
  EXPECT(batchLayout({2, 3, 4}, arg) == BatchLayout::Whole);
  EXPECT(batchLayout({6, 4}, arg) == BatchLayout::MergedMicroBatches);
  EXPECT(batchLayout({5, 2, 3, 4}, arg) == BatchLayout::PerStep);
  EXPECT(batchLayout({5, 6, 4}, arg) == BatchLayout::PerStep);
  EXPECT(batchOffset(BatchLayout::PerStep, {5, 6, 4}, arg, 7) == 2 * 24);
  EXPECT(batchOffset(BatchLayout::MergedMicroBatches, {6, 4}, arg, 7) == 0);
  // Two leading steps dimensions, or samples that do not add up: no.
  EXPECT(batchLayout({3, 5, 2, 3, 4}, arg) == BatchLayout::Mismatch);
  EXPECT(batchLayout({5, 7, 4}, arg) == BatchLayout::Mismatch);
  EXPECT(batchLayout({}, {4}) == BatchLayout::Mismatch);
  // A scalar input (a dropout seed) with one value per step.
  EXPECT(batchLayout({3}, {}) == BatchLayout::PerStep);
}

} // namespace

int main() {
  roundTrip();
  errors();
  indexRanges();
  batches();
  return testSummary();
}
