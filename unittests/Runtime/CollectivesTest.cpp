//===- CollectivesTest.cpp - the collectives runtime on a 2x2 grid --------===//
//
// Part of Ober-Train. Four ranks on a [2, 2] grid run every collective the
// runtime offers, through asynchronous channels, and check each result
// against its definition, for small messages and for messages the MPI
// transport reduces as rings. Without arguments the ranks are threads of
// this process; with `--mpi` this is one rank of an `mpirun -np 4` job.
// The ring algorithms (Ring.h) are also checked on their own, over
// threads, for 1-5 members, odd counts and pieces of a few elements.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/MPI.h"
#include "ober/Runtime/Ring.h"

#include "../TestSupport.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <tuple>

using namespace ober::rt;

namespace {
std::mutex checks; // EXPECT's counter is shared by the rank threads

/// Element `i` of rank `r`'s input: distinct per rank and element.
double valueOf(int64_t r, int64_t i) { return 1 + r * 100 + i; }

template <typename T> std::vector<T> inputOf(int64_t r, int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(valueOf(r, i));
  return v;
}

CollectiveDesc desc(int64_t kind, std::vector<int64_t> shape,
                    std::vector<int64_t> axes, int64_t group) {
  CollectiveDesc d;
  d.kind = kind;
  d.shape = std::move(shape);
  d.gridAxes = std::move(axes);
  d.group = group;
  d.peer.assign(d.gridAxes.size(), 0);
  return d;
}

void expectEqual(const std::vector<float> &got, const std::vector<float> &want,
                 const char *what, int64_t rank) {
  std::lock_guard<std::mutex> lock(checks);
  bool same = got == want;
  if (!same)
    std::fprintf(stderr, "rank %lld: %s differs\n",
                 static_cast<long long>(rank), what);
  EXPECT(same);
}

/// Runs every check as rank `r` of the grid [2, 2]; groups: 0 = axis [0],
/// 1 = axis [1], 2 = axes [0, 1].
void runRank(Transport &transport, int64_t r) {
  Grid grid({2, 2});
  Channel channel(transport, grid, r, {{0}, {1}, {0, 1}});
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

  // Pipeline transfers along axis 0: two sends before the receives, in
  // order, with tags.
  {
    int64_t other = 1 - coords[0];
    CollectiveDesc send = desc(OBER_COLL_SEND, {6}, {0}, 0);
    send.peer = {other};
    send.tag = 7;
    CollectiveDesc recv = send;
    recv.kind = OBER_COLL_RECV;
    std::vector<float> second = inputOf<float>(r + 10, 6), a(6), b(6);
    channel.start(send, x.data(), nullptr);
    channel.start(send, second.data(), nullptr);
    int64_t ha = channel.start(recv, nullptr, a.data());
    int64_t hb = channel.start(recv, nullptr, b.data());
    channel.wait(hb);
    channel.wait(ha);
    int64_t peer = grid.moveAlong(r, {0}, {other});
    expectEqual(a, inputOf<float>(peer, 6), "first transfer", r);
    expectEqual(b, inputOf<float>(peer + 10, 6), "second transfer", r);
  }
}
/// Point-to-point messages among threads in a ring: a queue per member
/// of what its previous member sent.
struct ThreadRing {
  explicit ThreadRing(int64_t members) : inbox(members) {}
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<std::deque<std::vector<char>>> inbox;

  Ring member(int64_t index, int64_t chunkBytes) {
    int64_t members = static_cast<int64_t>(inbox.size());
    auto exchange = [this, index, members](const void *send, int64_t sendBytes,
                                           void *recv, int64_t recvBytes) {
      std::unique_lock<std::mutex> lock(mutex);
      const char *p = static_cast<const char *>(send);
      inbox[(index + 1) % members].emplace_back(p, p + sendBytes);
      arrived.notify_all();
      arrived.wait(lock, [&] { return !inbox[index].empty(); });
      std::vector<char> got = std::move(inbox[index].front());
      inbox[index].pop_front();
      if (static_cast<int64_t>(got.size()) != recvBytes)
        throw CommError("a ring exchange got " + std::to_string(got.size()) +
                        " bytes, expected " + std::to_string(recvBytes));
      if (!got.empty())
        std::memcpy(recv, got.data(), got.size());
    };
    return {exchange, index, members, chunkBytes};
  }
};

/// ringAllReduce and ringReduceScatter among `members` threads, sending
/// at most `chunk` elements at a time, against their definitions: sums
/// and maxima of integers (exact), and sums of fractions, which every
/// member must hold bit for bit alike.
void checkRings(int64_t members, int64_t count, int64_t chunk) {
  ThreadRing ring(members);
  std::vector<std::vector<float>> reduced(members), sums(members),
      maxima(members), fractions(members);
  std::vector<std::thread> threads;
  for (int64_t m = 0; m < members; ++m)
    threads.emplace_back([&, m] {
      Ring self = ring.member(m, chunk * 4);
      reduced[m] = inputOf<float>(m, count);
      ringAllReduce(self, reduced[m].data(), count, DType::F32,
                    OBER_REDUCE_SUM);
      fractions[m].resize(count);
      for (int64_t i = 0; i < count; ++i)
        fractions[m][i] = 1.0f / static_cast<float>(3 + m * 7 + i);
      ringAllReduce(self, fractions[m].data(), count, DType::F32,
                    OBER_REDUCE_SUM);
      std::vector<float> in = inputOf<float>(m, count * members);
      sums[m].resize(count);
      maxima[m].resize(count);
      ringReduceScatter(self, in.data(), sums[m].data(), count, DType::F32,
                        OBER_REDUCE_SUM);
      ringReduceScatter(self, in.data(), maxima[m].data(), count, DType::F32,
                        OBER_REDUCE_MAX);
    });
  for (std::thread &t : threads)
    t.join();
  std::string what = "ring of " + std::to_string(members) + ", " +
                     std::to_string(count) + " elements, pieces of " +
                     std::to_string(chunk);
  for (int64_t m = 0; m < members; ++m) {
    std::vector<float> sum(count), scattered(count), max(count);
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t o = 0; o < members; ++o) {
        sum[i] += static_cast<float>(valueOf(o, i));
        scattered[i] += static_cast<float>(valueOf(o, m * count + i));
      }
      max[i] = static_cast<float>(valueOf(members - 1, m * count + i));
    }
    expectEqual(reduced[m], sum, (what + ": all-reduce").c_str(), m);
    expectEqual(fractions[m], fractions[0],
                (what + ": all-reduce of fractions, against member 0").c_str(),
                m);
    expectEqual(sums[m], scattered, (what + ": reduce-scatter").c_str(), m);
    expectEqual(maxima[m], max, (what + ": max reduce-scatter").c_str(), m);
  }
}

/// A bf16 all-reduce among three threads in pieces of two elements: the
/// runtime's reduction of 2-byte values.
void checkBF16Ring() {
  ThreadRing ring(3);
  std::vector<std::vector<uint16_t>> values(3, std::vector<uint16_t>(5));
  std::vector<std::thread> threads;
  for (int64_t m = 0; m < 3; ++m)
    threads.emplace_back([&, m] {
      for (int64_t i = 0; i < 5; ++i)
        storeFloat(DType::BF16, &values[m][i], 0.5 * (m + 1) + i);
      ringAllReduce(ring.member(m, 4), values[m].data(), 5, DType::BF16,
                    OBER_REDUCE_SUM);
    });
  for (std::thread &t : threads)
    t.join();
  for (int64_t m = 0; m < 3; ++m) {
    std::vector<float> got(5), want(5);
    for (int64_t i = 0; i < 5; ++i) {
      got[i] = static_cast<float>(loadFloat(DType::BF16, &values[m][i]));
      want[i] = static_cast<float>(3 + 3 * i);
    }
    expectEqual(got, want, "bf16 ring all-reduce", m);
  }
}
} // namespace

int main(int argc, char **argv) {
  for (int64_t members = 1; members <= 5; ++members)
    for (int64_t count : {0, 1, 7, 13})
      for (int64_t chunk : {1, 3, 64})
        checkRings(members, count, chunk);
  checkBF16Ring();

  // Descriptors survive their fields.
  CollectiveDesc d = desc(OBER_COLL_ALL_TO_ALL, {4, 8}, {0, 1}, 2);
  d.axis = 1;
  d.concatAxis = 0;
  d.dtype = DType::BF16;
  std::vector<int64_t> f = d.fields();
  CollectiveDesc back = CollectiveDesc::parse(f.data(), f.size());
  EXPECT(back.fields() == f);
  EXPECT((back.resultShape(4) == std::vector<int64_t>{16, 2}));
  bool refused = false;
  try {
    f[OBER_COLL_KIND] = 99;
    CollectiveDesc::parse(f.data(), f.size());
  } catch (const CommError &) {
    refused = true;
  }
  EXPECT(refused);

  if (argc > 1 && std::strcmp(argv[1], "--mpi") == 0) {
    std::string error;
    std::unique_ptr<Transport> t = mpiTransport(error);
    if (!t) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    EXPECT(t->size() == 4);
    if (t->size() == 4)
      runRank(*t, t->rank());
    t.reset();
    mpiFinalize();
    return testSummary();
  }
  std::shared_ptr<ThreadHub> hub = makeThreadHub(4, 60);
  std::vector<std::thread> ranks;
  for (int64_t r = 0; r < 4; ++r)
    ranks.emplace_back([&, r] {
      std::unique_ptr<Transport> t = threadTransport(hub, r);
      runRank(*t, r);
    });
  for (std::thread &t : ranks)
    t.join();
  return testSummary();
}
