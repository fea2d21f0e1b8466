//===- CollectivesTest.cpp - the collectives runtime on a 2x2 grid --------===//
//
// Part of Ober-Train. Four ranks on a [2, 2] grid run every collective the
// runtime offers, through asynchronous channels (ChannelChecks.h). Without
// arguments the ranks are threads of this process; with `--mpi` this is
// one rank of an `mpirun -np 4` job.
// The ring algorithms (Ring.h) are also checked on their own, over
// threads, for 1-5 members, odd counts and pieces of a few elements.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/MPI.h"
#include "ober/Runtime/Ring.h"

#include "ChannelChecks.h"

#include "../TestSupport.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <tuple>

using namespace ober::rt;

namespace {
using namespace ober::rt::test;

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
      checkChannel(*t, t->rank());
    t.reset();
    mpiFinalize();
    return testSummary();
  }
  std::shared_ptr<ThreadHub> hub = makeThreadHub(4, 60);
  std::vector<std::thread> ranks;
  for (int64_t r = 0; r < 4; ++r)
    ranks.emplace_back([&, r] {
      std::unique_ptr<Transport> t = threadTransport(hub, r);
      checkChannel(*t, r);
    });
  for (std::thread &t : ranks)
    t.join();
  return testSummary();
}
