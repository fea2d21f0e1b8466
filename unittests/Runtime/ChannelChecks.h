//===- ChannelChecks.h - every collective of a channel, checked -*- C++ -*-===//
//
// Part of Ober-Train. Four ranks on a [2, 2] grid run every collective the
// runtime offers through a channel over a given transport, and check each
// result against its definition: small messages, messages the MPI
// transport reduces as rings, collectives along an axis that is not the
// outermost (the channel rearranges blocks through the transport's
// copies), and pipeline transfers. CollectivesTest runs them over threads
// and MPI, CUDARuntimeTest over NcclTransport (the loopback NCCL).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_UNITTESTS_RUNTIME_CHANNELCHECKS_H
#define OBER_UNITTESTS_RUNTIME_CHANNELCHECKS_H

#include "ober/Runtime/Comm.h"

#include "../TestSupport.h"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <vector>

namespace ober::rt::test {
inline std::mutex checks; // EXPECT's counter is shared by the rank threads

/// Element `i` of rank `r`'s input: distinct per rank and element.
inline double valueOf(int64_t r, int64_t i) { return 1 + r * 100 + i; }

template <typename T> inline std::vector<T> inputOf(int64_t r, int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(valueOf(r, i));
  return v;
}

inline CollectiveDesc desc(int64_t kind, std::vector<int64_t> shape,
                    std::vector<int64_t> axes, int64_t group) {
  CollectiveDesc d;
  d.kind = kind;
  d.shape = std::move(shape);
  d.gridAxes = std::move(axes);
  d.group = group;
  d.peer.assign(d.gridAxes.size(), 0);
  return d;
}

inline void expectEqual(const std::vector<float> &got, const std::vector<float> &want,
                 const char *what, int64_t rank) {
  std::lock_guard<std::mutex> lock(checks);
  bool same = got == want;
  if (!same)
    std::fprintf(stderr, "rank %lld: %s differs\n",
                 static_cast<long long>(rank), what);
  EXPECT(same);
}

/// The groups checkChannel's channel makes: 0 = axis [0], 1 = axis [1],
/// 2 = axes [0, 1] (every rank, in rank order).
inline const std::vector<std::vector<int64_t>> kCheckGroups = {{0}, {1}, {0, 1}};

/// Runs every check as rank `r` of the grid [2, 2] on a channel over
/// `transport` (kCheckGroups).
inline void checkChannel(Transport &transport, int64_t r) {
  Grid grid({2, 2});
  Channel channel(transport, grid, r, kCheckGroups);
  std::vector<int64_t> coords = grid.coordinates(r);

  // All-reduce over axis 0, started twice before either wait.
  std::vector<float> x = inputOf<float>(r, 6), sum(6), twice(6);
  CollectiveDesc ar = desc(OBER_COLL_ALL_REDUCE, {2, 3}, {0}, 0);
  int64_t h1 = channel.start(ar, x.data(), sum.data());
  int64_t h2 = channel.start(ar, x.data(), twice.data());
  channel.wait(h2);
  channel.wait(h1);
  std::vector<float> want(6);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t m : grid.group(r, {0}))
      want[i] += static_cast<float>(valueOf(m, i));
  expectEqual(sum, want, "all-reduce", r);
  expectEqual(twice, want, "second all-reduce", r);

  // Max over all four, bf16, f16, i64, i1.
  {
    CollectiveDesc mx = desc(OBER_COLL_ALL_REDUCE, {6}, {0, 1}, 2);
    mx.reduction = OBER_REDUCE_MAX;
    std::vector<float> out(6);
    channel.run(mx, x.data(), out.data());
    std::vector<float> w = inputOf<float>(3, 6);
    expectEqual(out, w, "max all-reduce", r);
    for (DType t : {DType::BF16, DType::F16}) {
      std::vector<uint16_t> in(4), got(4);
      for (int64_t i = 0; i < 4; ++i)
        storeFloat(t, &in[i], 0.5 * (r + 1) + i);
      CollectiveDesc h = desc(OBER_COLL_ALL_REDUCE, {4}, {0, 1}, 2);
      h.dtype = t;
      channel.run(h, in.data(), got.data());
      std::vector<float> g(4), e(4);
      for (int64_t i = 0; i < 4; ++i) {
        g[i] = static_cast<float>(loadFloat(t, &got[i]));
        e[i] = static_cast<float>(0.5 * (1 + 2 + 3 + 4) + 4 * i);
      }
      expectEqual(g, e, t == DType::BF16 ? "bf16 sum" : "f16 sum", r);
    }
    std::vector<int64_t> li = inputOf<int64_t>(r, 3), lo(3);
    CollectiveDesc l = desc(OBER_COLL_ALL_REDUCE, {3}, {0, 1}, 2);
    l.dtype = DType::I64;
    channel.run(l, li.data(), lo.data());
    uint8_t flag = r == 2, any = 0;
    CollectiveDesc b = desc(OBER_COLL_ALL_REDUCE, {1}, {0, 1}, 2);
    b.dtype = DType::Bool;
    channel.run(b, &flag, &any);
    std::lock_guard<std::mutex> lock(checks);
    EXPECT(lo[0] == 4 + 600 && lo[2] == 12 + 600);
    EXPECT(any == 1);
  }

  // All-gather along axis 1 of [2, 3] over grid axis 1: out [2, 6].
  {
    CollectiveDesc ag = desc(OBER_COLL_ALL_GATHER, {2, 3}, {1}, 1);
    ag.axis = 1;
    std::vector<float> out(12), w(12);
    channel.run(ag, x.data(), out.data());
    std::vector<int64_t> members = grid.group(r, {1});
    for (int64_t row = 0; row < 2; ++row)
      for (int64_t m = 0; m < 2; ++m)
        for (int64_t c = 0; c < 3; ++c)
          w[row * 6 + m * 3 + c] =
              static_cast<float>(valueOf(members[m], row * 3 + c));
    expectEqual(out, w, "all-gather along axis 1", r);
  }

  // Reduce-scatter along axis 1 of [2, 4] over grid axis 1: out [2, 2].
  {
    std::vector<float> in = inputOf<float>(r, 8), out(4), w(4);
    CollectiveDesc rs = desc(OBER_COLL_REDUCE_SCATTER, {2, 4}, {1}, 1);
    rs.axis = 1;
    channel.run(rs, in.data(), out.data());
    for (int64_t row = 0; row < 2; ++row)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t m : grid.group(r, {1}))
          w[row * 2 + c] +=
              static_cast<float>(valueOf(m, row * 4 + coords[1] * 2 + c));
    expectEqual(out, w, "reduce-scatter along axis 1", r);
  }

  // All-to-all: split axis 0 of [2, 3], concatenate along axis 1 -> [1, 6].
  {
    CollectiveDesc a2a = desc(OBER_COLL_ALL_TO_ALL, {2, 3}, {0}, 0);
    a2a.axis = 0;
    a2a.concatAxis = 1;
    std::vector<float> out(6), w(6);
    channel.run(a2a, x.data(), out.data());
    std::vector<int64_t> members = grid.group(r, {0});
    for (int64_t m = 0; m < 2; ++m)
      for (int64_t c = 0; c < 3; ++c)
        w[m * 3 + c] =
            static_cast<float>(valueOf(members[m], coords[0] * 3 + c));
    expectEqual(out, w, "all-to-all", r);
  }

  // Broadcast from coordinate 1 of axis 1; all-slice of axis 1.
  {
    CollectiveDesc bc = desc(OBER_COLL_BROADCAST, {6}, {1}, 1);
    bc.peer = {1};
    std::vector<float> out(6);
    channel.run(bc, x.data(), out.data());
    expectEqual(out, inputOf<float>(grid.moveAlong(r, {1}, {1}), 6),
                "broadcast", r);
    CollectiveDesc sl = desc(OBER_COLL_ALL_SLICE, {2, 4}, {1}, 1);
    sl.axis = 1;
    std::vector<float> in = inputOf<float>(0, 8), part(4), w(4);
    channel.run(sl, in.data(), part.data());
    for (int64_t row = 0; row < 2; ++row)
      for (int64_t c = 0; c < 2; ++c)
        w[row * 2 + c] =
            static_cast<float>(valueOf(0, row * 4 + coords[1] * 2 + c));
    expectEqual(part, w, "all-slice", r);
  }

  // Messages the MPI transport reduces as rings (1 MiB and more): counts
  // that do not divide among the members; sums of integers, exact in f32.
  // All-reduces over all four of one piece a block and of several;
  // reduce-scatters along grid axis 1 and over all four (there partial
  // sums pass through two members' scratch).
  for (int64_t n : {300001, 1500007}) {
    std::vector<float> in = inputOf<float>(r, n), out(n), w(n);
    channel.run(desc(OBER_COLL_ALL_REDUCE, {n}, {0, 1}, 2), in.data(),
                out.data());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t m = 0; m < 4; ++m)
        w[i] += static_cast<float>(valueOf(m, i));
    expectEqual(out, w, "large all-reduce", r);
  }
  for (auto [per, axes, group] :
       {std::tuple(262147, std::vector<int64_t>{1}, 1),
        std::tuple(70001, std::vector<int64_t>{0, 1}, 2)}) {
    std::vector<int64_t> members = grid.group(r, axes);
    int64_t n = static_cast<int64_t>(members.size());
    int64_t me = std::find(members.begin(), members.end(), r) - members.begin();
    std::vector<float> in = inputOf<float>(r, n * per), out(per), w(per);
    channel.run(desc(OBER_COLL_REDUCE_SCATTER, {n * per}, axes, group),
                in.data(), out.data());
    for (int64_t i = 0; i < per; ++i)
      for (int64_t m : members)
        w[i] += static_cast<float>(valueOf(m, me * per + i));
    expectEqual(out, w, "large reduce-scatter", r);
  }

  // Pipeline transfers along axis 0: three sends before the receives;
  // messages with one tag arrive in order, and a receive takes its tag's
  // message whatever was sent before it (tag 8 first, received last).
  {
    int64_t other = 1 - coords[0];
    CollectiveDesc send = desc(OBER_COLL_SEND, {6}, {0}, 0);
    send.peer = {other};
    send.tag = 7;
    CollectiveDesc recv = send;
    recv.kind = OBER_COLL_RECV;
    CollectiveDesc early = send;
    early.tag = 8;
    early.shape = {2};
    CollectiveDesc late = early;
    late.kind = OBER_COLL_RECV;
    std::vector<float> second = inputOf<float>(r + 10, 6), a(6), b(6), c(2);
    channel.start(early, x.data() + 4, nullptr);
    channel.start(send, x.data(), nullptr);
    channel.start(send, second.data(), nullptr);
    int64_t ha = channel.start(recv, nullptr, a.data());
    int64_t hb = channel.start(recv, nullptr, b.data());
    int64_t hc = channel.start(late, nullptr, c.data());
    channel.wait(hc);
    channel.wait(hb);
    channel.wait(ha);
    int64_t peer = grid.moveAlong(r, {0}, {other});
    std::vector<float> last = inputOf<float>(peer, 6);
    expectEqual(a, last, "first transfer", r);
    expectEqual(b, inputOf<float>(peer + 10, 6), "second transfer", r);
    expectEqual(c, {last[4], last[5]}, "transfer of another tag", r);
  }
}
} // namespace ober::rt::test

#endif // OBER_UNITTESTS_RUNTIME_CHANNELCHECKS_H
