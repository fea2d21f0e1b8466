//===- CostModelTest.cpp - collectives and pipeline bubbles ---------------===//
//
// Part of Ober-Train.
//
//===----------------------------------------------------------------------===//

#include "ober/Planning/CostModel.h"
#include "ober/Planning/MemoryModel.h"
#include "ober/Planning/Plan.h"
#include "ober/Planning/Timeline.h"

#include "../TestSupport.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace mlir::ober::planning;

namespace {
void expectNear(double got, double want, double rel, const char *what) {
  if (std::fabs(got - want) > rel * std::fabs(want)) {
    std::fprintf(stderr, "%s: got %.6g, want %.6g\n", what, got, want);
    ++testFailures();
  }
}
} // namespace

int main() {
  // The ZeRO paper's example (Rajbhandari et al. 2020, figure 1): 7.5B
  // parameters, mixed-precision Adam, 64 data-parallel devices. Its stage
  // 2 (16.6 GB) shards the gradients during the backward pass; the
  // partitioner scatters them once they are complete, so they count
  // whole (15 GB) at stages 2 and 3.
  auto gb = [](ModelState s) { return s.total() / 1e9; };
  expectNear(gb(modelStateBytes(7.5e9, 2, true, "adam", 0, 64)), 120, 1e-9,
             "zero-0");
  expectNear(gb(modelStateBytes(7.5e9, 2, true, "adam", 1, 64)), 31.40625,
             1e-9, "zero-1");
  expectNear(gb(modelStateBytes(7.5e9, 2, true, "adam", 2, 64)), 31.40625,
             1e-9, "zero-2");
  expectNear(gb(modelStateBytes(7.5e9, 2, true, "adam", 3, 64)), 16.640625,
             1e-9, "zero-3");
  expectNear(modelStateBytes(1e6, 4, false, "sgd", 0, 1).total(), 8e6, 1e-12,
             "plain sgd");
  std::string error;
  std::optional<Cluster> a100 = loadCluster("a100-80gb", 64, std::nullopt, error);
  if (!a100) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  // The launch queue: a host-bound block (1 s of launches, 0.2 s of work)
  // and a device-bound one (0.2 s, 1 s). In that order the device waits
  // for the first block's launches, then runs the second's work: 2 s. The
  // other way round the first block's launches hide under the second's
  // work: 1.2 s.
  {
    Device d;
    LaunchQueue q;
    q.add(1.0, 0.2);
    q.add(0.2, 1.0);
    expectNear(q.seconds(d, /*reversed=*/false), 2.0, 1e-12, "queue in order");
    expectNear(q.seconds(d, /*reversed=*/true), 1.2, 1e-12, "queue reversed");
    // Evenly mixed blocks hide the shorter total under the longer.
    LaunchQueue even;
    for (int i = 0; i < 4; ++i)
      even.add(0.3, 0.2);
    expectNear(even.seconds(d, false), 1.2, 1e-12, "host-bound queue");
    d.launchOverlap = 0;
    expectNear(even.seconds(d, false), 2.0, 1e-12, "no overlap: they add");
    d.launchOverlap = 0.5;
    expectNear(even.seconds(d, true), 1.6, 1e-12, "half overlap");
  }
  // Megatron's placement: the first segment on the first stage, the last
  // on the last, the middle ones in equal runs, the earlier stages taking
  // the remainder (6 over 4 stages: 2, 2, 1, 1; 10: 3, 3, 2, 2).
  {
    auto expectStarts = [](std::vector<unsigned> got,
                           std::vector<unsigned> want, const char *what) {
      if (got != want) {
        std::fprintf(stderr, "%s: wrong stage starts\n", what);
        ++testFailures();
      }
    };
    expectStarts(uniformStarts(8, 4), {0, 3, 5, 6}, "uniform 6 over 4");
    expectStarts(uniformStarts(12, 4), {0, 4, 7, 9}, "uniform 10 over 4");
    expectStarts(uniformStarts(26, 4), {0, 7, 13, 19}, "12 layers over 4");
    expectStarts(uniformStarts(26, 1), {0}, "one stage");
  }
  // The preset's NVLink level carries nccl-tests measurements of 8 A100s
  // (bus bandwidth 229.3 GB/s at 1 GiB, 19.8 GB/s at 1 MiB); below the
  // smallest message the time falls linearly to the ring's latency.
  double gib = std::ldexp(1.0, 30), mib = std::ldexp(1.0, 20);
  expectNear(bestCollectiveTime(Collective::AllReduce, gib, 8, *a100),
             2 * 7.0 / 8 * gib / 229.3e9, 1e-9, "measured all-reduce, 8");
  expectNear(bestCollectiveTime(Collective::AllGather, gib, 8, *a100),
             7.0 / 8 * gib / 229.3e9, 1e-9, "measured all-gather, 8");
  double small = 2 * 7.0 / 8 * mib / 19.8e9;
  expectNear(bestCollectiveTime(Collective::AllReduce, mib / 2, 8, *a100),
             14 * 1.5e-6 + (small - 14 * 1.5e-6) / 2, 1e-9,
             "below the measured sizes");
  // Between the measured group sizes (4: 221.6 GB/s, 8: 229.3 GB/s at
  // 1 GiB), log-linear.
  expectNear(a100->links.front().busBandwidth.at(gib, 6),
             221.6e9 + (229.3e9 - 221.6e9) * std::log(1.5) / std::log(2.0),
             1e-9, "group of 6");
  // The alpha-beta model where nothing is measured. Ring all-reduce of 1 GB
  // over the 8 GPUs of a node on NVLink: 2 (p-1)/p n / B + 2 (p-1) alpha.
  a100->links.front().busBandwidth = {};
  double n = 1e9;
  expectNear(collectiveTime(Collective::AllReduce, Algorithm::Ring, n, 8, *a100),
             2 * 7.0 / 8 * n / 300e9 + 14 * 1.5e-6, 1e-9, "ring all-reduce, 8");
  // All-gather: (p-1)/p n / B + (p-1) alpha.
  expectNear(collectiveTime(Collective::AllGather, Algorithm::Ring, n, 8, *a100),
             7.0 / 8 * n / 300e9 + 7 * 1.5e-6, 1e-9, "ring all-gather, 8");
  // Published nccl-tests all-reduce bus bandwidth on 8 H100s in one node
  // (bus bandwidth = 2 (p-1)/p * bytes / time), within 15%.
  std::optional<Cluster> h100 = loadCluster("h100-sxm", 8, std::nullopt, error);
  for (auto [bytes, busbw] : {std::pair{1e6, 67e9}, std::pair{128e6, 400e9},
                              std::pair{1e9, 466e9}}) {
    double t = bestCollectiveTime(Collective::AllReduce, bytes, 8, *h100);
    expectNear(2 * 7.0 / 8 * bytes / t, busbw, 0.15, "nccl-tests bus bandwidth");
  }
  // 16 GPUs span two nodes: a flat ring runs at InfiniBand speed.
  expectNear(collectiveTime(Collective::AllReduce, Algorithm::Ring, n, 16, *a100),
             2 * 15.0 / 16 * n / 25e9 + 30 * 10e-6, 1e-9, "ring all-reduce, 16");
  // Hierarchical: NVLink reduce-scatter + all-gather inside nodes, and a
  // ring across node leaders on 1/8 of the data.
  double inner = 2 * (7.0 / 8 * n / 300e9 + 7 * 1.5e-6);
  double across = 2 * 1 * (10e-6 + n / 8 / 2 / 25e9);
  expectNear(collectiveTime(Collective::AllReduce, Algorithm::Hierarchical, n,
                            16, *a100),
             inner + across, 1e-9, "hierarchical all-reduce, 16");
  if (!(bestCollectiveTime(Collective::AllReduce, n, 16, *a100) <
        collectiveTime(Collective::AllReduce, Algorithm::Ring, n, 16, *a100))) {
    std::fprintf(stderr, "hierarchical should beat a flat ring across nodes\n");
    ++testFailures();
  }
  // Tiny messages: the tree's log(p) latency wins.
  if (!(collectiveTime(Collective::AllReduce, Algorithm::Tree, 1024, 64, *a100) <
        collectiveTime(Collective::AllReduce, Algorithm::Ring, 1024, 64, *a100))) {
    std::fprintf(stderr, "tree should beat ring for small all-reduces\n");
    ++testFailures();
  }
  expectNear(collectiveTime(Collective::AllReduce, Algorithm::Ring, n, 1, *a100),
             0, 0, "one device");
  // Pipeline timelines of equal stages (forward 1 s, backward 2 s per
  // micro-batch) against the schedules' closed forms.
  auto makespan = [](Schedule schedule, unsigned p, unsigned m, unsigned v,
                     ChunkTimes each) {
    std::vector<ChunkTimes> times(p * v, each);
    return simulatePipeline(schedule, p, m, v, times).makespan;
  };
  ChunkTimes equal{1, 2, 0, 0, 0};
  // GPipe and 1F1B: (m + p - 1) (f + b).
  expectNear(makespan(Schedule::GPipe, 8, 32, 1, equal), (32 + 7) * 3.0, 1e-12,
             "gpipe");
  expectNear(makespan(Schedule::OneFOneB, 8, 32, 1, equal), (32 + 7) * 3.0,
             1e-12, "1f1b");
  expectNear(makespan(Schedule::OneFOneB, 1, 32, 1, equal), 32 * 3.0, 1e-12,
             "one stage");
  expectNear(makespan(Schedule::OneFOneB, 8, 4, 1, equal), (4 + 7) * 3.0,
             1e-12, "fewer micro-batches than stages");
  // Interleaved with v chunks of 1/v the work: the bubble shrinks v-fold.
  expectNear(makespan(Schedule::Interleaved, 4, 8, 2, {0.5, 1, 0, 0, 0}),
             8 * 3.0 + 3 * 3.0 / 2, 1e-12, "interleaved");
  // ZB-H1 (Qi et al. 2024): bubble (p - 1)(F + B - W) for equal F, B, W.
  expectNear(makespan(Schedule::ZeroBubble, 4, 8, 1, {1, 1, 1, 0, 0}),
             8 * 3.0 + 3 * 1.0, 1e-12, "zero bubble");
  // A transfer of 0.5 s between stages delays warm-up and drain: each
  // of the p - 1 hops forward and back.
  expectNear(makespan(Schedule::GPipe, 4, 1, 1, {1, 2, 0, 0.5, 0.5}),
             4 * 3.0 + 3 * 1.0, 1e-12, "transfers");
  // A slower stage sets the pace of the steady state.
  {
    std::vector<ChunkTimes> times(4, equal);
    times[3] = {2, 4, 0, 0, 0};
    Timeline t = simulatePipeline(Schedule::OneFOneB, 4, 16, 1, times);
    expectNear(t.makespan, 3 * 1.0 + 16 * 6.0 + 3 * 2.0, 1e-12,
               "slow last stage");
    expectNear(t.busy[3], 16 * 6.0, 1e-12, "slow stage busy");
  }

  // Groups of ranks `stride` apart: 8 adjacent ranks share a node (NVLink);
  // 8 ranks 8 apart are one per node (InfiniBand, each GPU's own port); 16
  // ranks 4 apart are 2 per node (hierarchical).
  expectNear(groupCollectiveTime(Collective::AllReduce, n, 8, 1, *a100),
             bestCollectiveTime(Collective::AllReduce, n, 8, *a100), 1e-12,
             "group in a node");
  expectNear(groupCollectiveTime(Collective::AllReduce, n, 8, 8, *a100),
             std::min(2 * 7.0 / 8 * n / 25e9 + 14 * 10e-6,
                      3 * 10e-6 + 2 * n / 25e9),
             1e-9, "group across nodes");
  double two = 2 * (1.0 / 2 * n / 300e9 + 1.5e-6) +
               (2 * 7 * 10e-6 + 2 * 7.0 / 8 * (n / 2) / 25e9);
  expectNear(groupCollectiveTime(Collective::AllReduce, n, 16, 4, *a100), two,
             1e-9, "two per node");
  expectNear(sendTime(n, 8, *a100), 10e-6 + n / 25e9, 1e-12, "send across");
  expectNear(sendTime(n, 1, *a100), 1.5e-6 + n / 300e9, 1e-12, "send inside");
  // Megatron's fused softmax: micro-batch x heads per device a multiple
  // of 4 and at most 4096 keys; a cluster file states it on top of a
  // preset, and the rule survives the JSON round trip.
  {
    llvm::Expected<llvm::json::Value> file = llvm::json::parse(
        R"({"preset": "a100-80gb", "device": {"fused_softmax":
            {"batch_multiple": 4, "max_keys": 4096, "fallback_kernels": 5}}})");
    std::optional<Cluster> c =
        file ? clusterFromJSON(*file, error) : std::nullopt;
    EXPECT(c.has_value());
    if (c) {
      const Device::SoftmaxFusion &rule = c->device.softmaxFusion;
      EXPECT(rule.fused(8, 1024));
      EXPECT(!rule.fused(2, 1024)); // 16 heads / tp 8 x micro-batch 1
      EXPECT(rule.fused(4, 4096));
      EXPECT(!rule.fused(4, 8192));
      EXPECT(c->device.memoryBytes == a100->device.memoryBytes);
      std::optional<Cluster> again = clusterFromJSON(c->toJSON(), error);
      EXPECT(again && again->device.softmaxFusion.fallbackKernels == 5 &&
             again->device.softmaxFusion.maxKeys == 4096);
    }
    EXPECT(Device().softmaxFusion.fused(3, 1e6)); // unset: always fused
  }
  return testSummary();
}
