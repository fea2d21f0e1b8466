//===- CUDARuntimeTest.cpp - the CUDA runtime's logic, without a GPU ------===//
//
// Part of Ober-Train. Checks what needs no GPU: NCCL's type and reduction
// mapping, NcclTransport's collectives over the loopback NCCL (thread
// ranks, host memory) and a channel over it, the caching allocator over a fake device, image format
// detection, GEMM type validation, eager kernel loading asked for before
// the driver starts, that registering device code leaves the
// driver alone, and (on a machine without a driver) that every entry point
// reports "no CUDA device" cleanly.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/CuBLASLt.h"
#include "ober/Runtime/Devices/Modules.h"
#include "ober/Runtime/Devices/NCCL.h"
#include "ober/Runtime/KernelTimes.h"

#include "ChannelChecks.h"

#include "../TestSupport.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <map>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {
constexpr size_t MiB = size_t(1) << 20;

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}
bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// The message `f` throws as E ("" when it does not throw).
template <typename E, typename F> std::string errorOf(F f) {
  try {
    f();
  } catch (const E &e) {
    return e.what();
  }
  return "";
}

//===----------------------------------------------------------------------===//
// NCCL mapping
//===----------------------------------------------------------------------===//

void testNcclMapping() {
  const std::pair<DType, ncclDataType_t> table[] = {
      {DType::F16, ncclFloat16}, {DType::BF16, ncclBfloat16},
      {DType::F32, ncclFloat32}, {DType::F64, ncclFloat64},
      {DType::I8, ncclInt8},     {DType::U8, ncclUint8},
      {DType::I32, ncclInt32},   {DType::I64, ncclInt64},
      {DType::Bool, ncclUint8}};
  for (auto [type, nccl] : table)
    EXPECT(ncclTypeOf(type) == nccl);
  for (DType bad : {DType::I16, DType::Unicode}) {
    std::string e = errorOf<CommError>([&] { ncclTypeOf(bad); });
    EXPECT(contains(e, dtypeName(bad)));
    EXPECT(contains(e, "supported: float16, bfloat16, float32"));
  }
  EXPECT(ncclReductionOf(OBER_REDUCE_SUM, DType::F32) == ncclSum);
  EXPECT(ncclReductionOf(OBER_REDUCE_MAX, DType::F32) == ncclMax);
  EXPECT(ncclReductionOf(OBER_REDUCE_MIN, DType::BF16) == ncclMin);
  EXPECT(ncclReductionOf(OBER_REDUCE_PRODUCT, DType::I64) == ncclProd);
  // Bool: sum and max are "or", product and min "and" (as reduceInto).
  EXPECT(ncclReductionOf(OBER_REDUCE_SUM, DType::Bool) == ncclMax);
  EXPECT(ncclReductionOf(OBER_REDUCE_PRODUCT, DType::Bool) == ncclMin);
  std::string e = errorOf<CommError>([] { ncclReductionOf(7, DType::F32); });
  EXPECT(contains(e, "unknown reduction 7"));
  EXPECT(contains(e, "supported: sum, max, min, product"));
}

//===----------------------------------------------------------------------===//
// NcclTransport over the loopback NCCL
//===----------------------------------------------------------------------===//

/// Runs `body` on `size` thread ranks, each an NcclTransport over `api`
/// bootstrapped by a thread transport; an exception fails the test.
template <typename F>
void onNcclRanks(int64_t size, NcclApi &api, NcclTransport::Options options,
                 F body) {
  std::shared_ptr<ThreadHub> hub = makeThreadHub(size, 30);
  options.api = &api;
  std::vector<std::thread> ranks;
  for (int64_t r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      std::unique_ptr<Transport> bootstrap = threadTransport(hub, r);
      try {
        NcclTransport transport(*bootstrap, static_cast<int>(r), options);
        body(transport);
      } catch (const std::exception &e) {
        std::fprintf(stderr, "rank %lld: %s\n", static_cast<long long>(r),
                     e.what());
        EXPECT(!"an NCCL rank threw");
        failThreadHub(*hub, e.what());
      }
    });
  for (std::thread &t : ranks)
    t.join();
}

/// Makes groups of pairs {0, 1}, {2, 3} (group 0) and the world (group 1).
void makePairGroups(NcclTransport &t) {
  int64_t pair = t.rank() / 2;
  t.createGroups({{{2 * pair, 2 * pair + 1}, pair}, {{0, 1, 2, 3}, 0}});
}

std::vector<uint16_t> bf16s(const std::vector<double> &values) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    storeFloat(DType::BF16, &out[i], values[i]);
  return out;
}

/// The bf16 inputs of rank `r`: sums whose rounding depends on the order.
std::vector<uint16_t> bf16Input(int64_t r) {
  return bf16s({r == 0 ? 256.0 : 1.0, 1.0 + r / 128.0, -3.0 * r, 0.1 * r});
}

void ncclReductions(NcclTransport &t) {
  int64_t r = t.rank(), first = 2 * (r / 2);
  makePairGroups(t);
  float in[3] = {float(r), float(10 * r), 1.5f}, out[3] = {};
  t.allReduce(0, in, out, 3, DType::F32, OBER_REDUCE_SUM);
  float pairSum = float(2 * first + 1);
  EXPECT(out[0] == pairSum && out[1] == 10 * pairSum && out[2] == 3.0f);
  float mine = 2.5f - float((r - 1) * (r - 1)), max = 0;
  t.allReduce(1, &mine, &max, 1, DType::F32, OBER_REDUCE_MAX);
  EXPECT(max == 2.5f);

  // bf16 sums over the world round at each step, in member order, as
  // reduceInto does (256 + 1 + 1 + 1 stays 256; f32 then bf16 gives 260).
  std::vector<uint16_t> x = bf16Input(r), sum(x.size());
  t.allReduce(1, x.data(), sum.data(), 4, DType::BF16, OBER_REDUCE_SUM);
  std::vector<uint16_t> expected = bf16Input(0);
  for (int64_t m = 1; m < 4; ++m)
    reduceInto(DType::BF16, OBER_REDUCE_SUM, expected.data(),
               bf16Input(m).data(), 4);
  EXPECT(sum == expected);
  EXPECT(loadFloat(DType::BF16, &sum[0]) == 256.0);
  std::vector<uint16_t> bmax(4);
  t.allReduce(0, x.data(), bmax.data(), 4, DType::BF16, OBER_REDUCE_MAX);
  std::vector<uint16_t> pairMax = bf16Input(first);
  reduceInto(DType::BF16, OBER_REDUCE_MAX, pairMax.data(),
             bf16Input(first + 1).data(), 4);
  EXPECT(bmax == pairMax);
  EXPECT(loadFloat(DType::BF16, &bmax[2]) == -3.0 * first);

  // Bool sums are "or"; int32 products.
  uint8_t flag = r == 3, any = 0;
  t.allReduce(1, &flag, &any, 1, DType::Bool, OBER_REDUCE_SUM);
  EXPECT(any == 1);
  int32_t factor = int32_t(r + 1), product = 0;
  t.allReduce(1, &factor, &product, 1, DType::I32, OBER_REDUCE_PRODUCT);
  EXPECT(product == 24);

  // Reduce-scatter: member m gets block m of the sum.
  float blocks[8], block[2] = {};
  for (int i = 0; i < 8; ++i)
    blocks[i] = float(100 * r + i);
  t.reduceScatter(1, blocks, block, 2, DType::F32, OBER_REDUCE_SUM);
  EXPECT(block[0] == float(600 + 8 * r) && block[1] == float(600 + 8 * r + 4));
}

void ncclMovement(NcclTransport &t) {
  int64_t r = t.rank(), first = 2 * (r / 2);
  makePairGroups(t);
  char mine[3] = {char('a' + r), char('A' + r), char(r)}, all[12] = {};
  t.allGather(1, mine, all, 3);
  for (int m = 0; m < 4; ++m)
    EXPECT(all[3 * m] == 'a' + m && all[3 * m + 1] == 'A' + m &&
           all[3 * m + 2] == m);

  int64_t data[2] = {r, -r};
  t.broadcast(0, data, sizeof(data), /*root=*/1);
  EXPECT(data[0] == first + 1 && data[1] == -(first + 1));

  // All-to-all: block m (2 bytes) goes to member m.
  char blocks[8], received[8] = {};
  for (int m = 0; m < 4; ++m) {
    blocks[2 * m] = char(10 * r + m);
    blocks[2 * m + 1] = char(r);
  }
  t.allToAll(1, blocks, received, 2);
  for (int m = 0; m < 4; ++m)
    EXPECT(received[2 * m] == 10 * m + r && received[2 * m + 1] == m);
  char pairBlocks[2] = {char(r), char(r + 50)}, pairReceived[2] = {};
  t.allToAll(0, pairBlocks, pairReceived, 1);
  int64_t index = r - first; // block `index` of each member
  EXPECT(pairReceived[0] == first + 50 * index &&
         pairReceived[1] == first + 1 + 50 * index);

  // A ring of sends; the sender reuses its buffer at once.
  int32_t message[2] = {int32_t(r), 7}, got[2] = {};
  t.send((r + 1) % 4, /*tag=*/5, message, sizeof(message));
  message[0] = -1;
  t.recv((r + 3) % 4, /*tag=*/5, got, sizeof(got));
  EXPECT(got[0] == (r + 3) % 4 && got[1] == 7);
}

void ncclErrors(NcclTransport &t) {
  int64_t r = t.rank();
  float x[2] = {1, 2}, y[2];
  // Before createGroups.
  EXPECT(contains(errorOf<CommError>([&] { t.send(0, 0, x, 4); }),
                  "send: NcclTransport::createGroups has not been called"));
  makePairGroups(t);
  std::string e = errorOf<CommError>([&] { t.send((r + 1) % 4, 0, x, 4); });
  EXPECT(contains(e, "send: rank " + std::to_string((r + 1) % 4) +
                         " is not a pipeline peer rank " + std::to_string(r) +
                         " sends to"));
  e = errorOf<CommError>(
      [&] { t.allReduce(0, x, y, 2, DType::I16, OBER_REDUCE_SUM); });
  EXPECT(contains(e, "NCCL has no int16 type"));
  e = errorOf<CommError>(
      [&] { t.allReduce(2, x, y, 2, DType::F32, OBER_REDUCE_SUM); });
  EXPECT(e == "all-reduce: no group 2 (createGroups made 2)");
  e = errorOf<CommError>([&] { t.allGather(5, x, y, 4); });
  EXPECT(e == "all-gather: no group 5 (createGroups made 2)");
  e = errorOf<CommError>([&] { t.broadcast(0, x, 4, /*root=*/2); });
  EXPECT(contains(e, "root 2 is not a member index of group 0"));
  // Ranks that disagree: NCCL's failure, named by the transport.
  e = errorOf<CommError>(
      [&] { t.allReduce(0, x, y, 1 + r % 2, DType::F32, OBER_REDUCE_SUM); });
  EXPECT(startsWith(e, "ncclAllReduce of " + std::to_string(1 + r % 2) +
                           " float32 in group 0 failed: invalid usage"));
  // A rank outside its own group.
  e = errorOf<CommError>([&] { t.createGroups({{{(r + 1) % 4}, 0}}); });
  EXPECT(
      contains(e, "rank " + std::to_string(r) + " is not a member of group 0"));
}

/// The names of the files in `dir`.
std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *entry = readdir(d))
      if (entry->d_name[0] != '.')
        names.push_back(entry->d_name);
    closedir(d);
  }
  return names;
}

void testNcclLoopback() {
  std::unique_ptr<NcclApi> api = loopbackNccl(/*timeoutSeconds=*/20);
  // Ids through the bootstrap transport.
  NcclTransport::Options pipeline;
  pipeline.pipelineGroup = {0, 1, 2, 3};
  onNcclRanks(4, *api, {}, ncclReductions);
  onNcclRanks(4, *api, pipeline, ncclMovement);
  onNcclRanks(4, *api, {}, ncclErrors);

  // Ids through files: strided groups {0, 2}, {1, 3}, made twice.
  char dir[] = "/tmp/ober-nccl-ids-XXXXXX";
  EXPECT(mkdtemp(dir) != nullptr);
  NcclTransport::Options files = pipeline;
  files.idDirectory = dir;
  files.idTimeoutSeconds = 20;
  onNcclRanks(4, *api, files, [](NcclTransport &t) {
    int64_t r = t.rank();
    for (int generation = 0; generation < 2; ++generation) {
      t.createGroups({{{r % 2, r % 2 + 2}, r % 2}});
      int32_t x = int32_t(r + 10 * generation), sum = 0;
      t.allReduce(0, &x, &sum, 1, DType::I32, OBER_REDUCE_SUM);
      EXPECT(sum == 2 * (r % 2) + 2 + 20 * generation);
      int64_t ring = r, got = -1;
      t.send((r + 1) % 4, 0, &ring, sizeof(ring));
      t.recv((r + 3) % 4, 0, &got, sizeof(got));
      EXPECT(got == (r + 3) % 4);
    }
  });
  std::vector<std::string> names = filesIn(dir);
  // 2 groups and 12 ordered pairs, twice.
  EXPECT(names.size() == 28);
  for (const std::string &name : names) {
    EXPECT(startsWith(name, "ober-nccl-id-") ||
           startsWith(name, "ober-nccl-pair-"));
    std::remove((std::string(dir) + "/" + name).c_str());
  }
  rmdir(dir);

  // The loopback refuses an id it did not make.
  ncclComm_t comm = nullptr;
  EXPECT(api->commInitRank(&comm, 1, ncclUniqueId{}, 0) == ncclInvalidArgument);
  EXPECT(contains(api->errorString(ncclInvalidArgument), "not an id of"));
}

/// Pipeline transfers over the loopback, whose sends hold their stream
/// until received: on 3 ranks every rank sends to both others twice
/// (tags 1 and 2, of different sizes, one of them empty) before it
/// receives anything, then receives tag 2 before tag 1; a large message
/// follows; a receive of the wrong size names both sizes (and takes the
/// message, so that the transports close cleanly).
void testPipelineTransfers() {
  std::unique_ptr<NcclApi> api = loopbackNccl(/*timeoutSeconds=*/20);
  NcclTransport::Options options;
  options.pipelineGroup = {0, 1, 2};
  onNcclRanks(3, *api, options, [](NcclTransport &t) {
    int64_t r = t.rank();
    t.createGroups({});
    std::vector<int32_t> small = {int32_t(r), 11, 12};
    for (int64_t peer = 0; peer < 3; ++peer)
      if (peer != r) {
        t.send(peer, /*tag=*/1, small.data(), 12);
        t.send(peer, /*tag=*/2, nullptr, 0);
      }
    small[0] = -1; // the sends copied it
    std::vector<float> large(300001), got(300001);
    for (size_t i = 0; i < large.size(); ++i)
      large[i] = static_cast<float>(r * 1000000 + i);
    t.send((r + 1) % 3, /*tag=*/3, large.data(), 4 * 300001);
    for (int64_t peer = 0; peer < 3; ++peer)
      if (peer != r) {
        int32_t three[3] = {};
        t.recv(peer, /*tag=*/2, nullptr, 0);
        t.recv(peer, /*tag=*/1, three, 12);
        std::lock_guard<std::mutex> lock(test::checks);
        EXPECT(three[0] == peer && three[1] == 11 && three[2] == 12);
      }
    int64_t before = (r + 2) % 3;
    t.recv(before, /*tag=*/3, got.data(), 4 * 300001);
    {
      std::lock_guard<std::mutex> lock(test::checks);
      EXPECT(got[0] == before * 1000000 && got[300000] == before * 1000000 + 300000);
    }
    int32_t word = int32_t(r);
    t.send((r + 1) % 3, /*tag=*/4, &word, 4);
    int64_t wide = 0;
    std::string e = errorOf<CommError>(
        [&] { t.recv(before, /*tag=*/4, &wide, 8); });
    std::lock_guard<std::mutex> lock(test::checks);
    EXPECT(contains(e, "recv of 8 bytes (tag 4) from rank " +
                           std::to_string(before) +
                           ": the message sent with that tag has 4 bytes"));
  });
}

/// Only the pairs a program transfers between are connected (a 1F1B
/// pipeline's neighbours): stage 0 reaches stage 1 but not stage 2.
void testPipelinePairs() {
  std::unique_ptr<NcclApi> api = loopbackNccl(/*timeoutSeconds=*/20);
  NcclTransport::Options options;
  options.pipelineGroup = {0, 1, 2};
  options.pipelinePairs = {{0, 1}, {1, 0}, {1, 2}, {2, 1}};
  onNcclRanks(3, *api, options, [](NcclTransport &t) {
    int64_t r = t.rank();
    t.createGroups({});
    int32_t mine = int32_t(10 + r), got[2] = {};
    for (int64_t peer : {r - 1, r + 1})
      if (peer >= 0 && peer < 3)
        t.send(peer, /*tag=*/1, &mine, 4);
    int n = 0;
    for (int64_t peer : {r - 1, r + 1})
      if (peer >= 0 && peer < 3)
        t.recv(peer, /*tag=*/1, &got[n++], 4);
    std::string e;
    if (r != 1)
      e = errorOf<CommError>([&] { t.send(2 - r, 1, &mine, 4); });
    std::lock_guard<std::mutex> lock(test::checks);
    EXPECT(r == 1 ? got[0] == 10 && got[1] == 12 : got[0] == 11);
    EXPECT(r == 1 || contains(e, "send: rank " + std::to_string(2 - r) +
                                     " is not a pipeline peer rank " +
                                     std::to_string(r) + " sends to"));
  });
}

/// The loopback NCCL, but a stream that never finishes (a collective a
/// failed peer never joins) unless `busy` is cleared, and communicators
/// counted as they are destroyed and aborted.
class StuckNccl final : public NcclApi {
public:
  explicit StuckNccl(NcclApi &real) : real(real) {}
  NcclApi &real;
  std::atomic<int> destroyed{0}, aborted{0};
  /// Whether the stream never finishes (else it is always idle).
  bool busy = true;

  ncclResult_t getUniqueId(ncclUniqueId *id) override {
    return real.getUniqueId(id);
  }
  ncclResult_t commInitRank(ncclComm_t *comm, int ranks, ncclUniqueId id,
                            int rank) override {
    return real.commInitRank(comm, ranks, id, rank);
  }
  ncclResult_t commDestroy(ncclComm_t comm) override {
    ++destroyed;
    return real.commDestroy(comm);
  }
  ncclResult_t commAbort(ncclComm_t comm) override {
    ++aborted;
    return real.commAbort(comm);
  }
  const char *errorString(ncclResult_t r) override {
    return real.errorString(r);
  }
  ncclResult_t allReduce(const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                         CUstream stream) override {
    return real.allReduce(in, out, count, type, op, comm, stream);
  }
  ncclResult_t allGather(const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclComm_t comm,
                         CUstream stream) override {
    return real.allGather(in, out, count, type, comm, stream);
  }
  ncclResult_t reduceScatter(const void *in, void *out, size_t count,
                             ncclDataType_t type, ncclRedOp_t op,
                             ncclComm_t comm, CUstream stream) override {
    return real.reduceScatter(in, out, count, type, op, comm, stream);
  }
  ncclResult_t broadcast(const void *in, void *out, size_t count,
                         ncclDataType_t type, int root, ncclComm_t comm,
                         CUstream stream) override {
    return real.broadcast(in, out, count, type, root, comm, stream);
  }
  ncclResult_t send(const void *data, size_t count, ncclDataType_t type,
                    int peer, ncclComm_t comm, CUstream stream) override {
    return real.send(data, count, type, peer, comm, stream);
  }
  ncclResult_t recv(void *data, size_t count, ncclDataType_t type, int peer,
                    ncclComm_t comm, CUstream stream) override {
    return real.recv(data, count, type, peer, comm, stream);
  }
  ncclResult_t groupStart() override { return real.groupStart(); }
  ncclResult_t groupEnd() override { return real.groupEnd(); }
  void useDevice(int device) override { real.useDevice(device); }
  std::shared_ptr<CUstream_st> createStream() override {
    return real.createStream();
  }
  void synchronize(CUstream) override {
    EXPECT(!"synchronize on a stream that never finishes");
  }
  StreamState query(CUstream) override {
    return busy ? StreamState::Busy : StreamState::Idle;
  }
  void waitFor(CUstream stream, const Event &ready) override {
    real.waitFor(stream, ready);
  }
  void record(Event &done, CUstream stream) override {
    real.record(done, stream);
  }
  void *allocate(int device, size_t bytes, CUstream stream) override {
    return real.allocate(device, bytes, stream);
  }
  void release(int device, void *memory) override {
    real.release(device, memory);
  }
  void copy(void *to, const void *from, size_t bytes,
            CUstream stream) override {
    real.copy(to, from, bytes, stream);
  }
  void copyRows(void *to, size_t toPitch, const void *from, size_t fromPitch,
                size_t width, size_t rows, CUstream stream) override {
    real.copyRows(to, toPitch, from, fromPitch, width, rows, stream);
  }
  void copyToHost(void *host, const void *from, size_t bytes,
                  CUstream stream) override {
    real.copyToHost(host, from, bytes, stream);
  }
  void fill32(void *to, uint32_t value, size_t count,
              CUstream stream) override {
    real.fill32(to, value, count, stream);
  }
  void follow(CUstream waiter, CUstream stream) override {
    real.follow(waiter, stream);
  }
  void useOn(int device, void *memory, CUstream stream) override {
    real.useOn(device, memory, stream);
  }
  std::shared_ptr<Event> markProgram() override { return real.markProgram(); }
  void retireStream(int device, CUstream stream) override {
    real.retireStream(device, stream);
  }
};

/// A transport whose stream never drains (a peer failed with collectives
/// queued) closes after teardownSeconds, aborting its communicators
/// rather than destroying them; one that drains destroys them.
void testNcclTeardown() {
  std::unique_ptr<NcclApi> loopback = loopbackNccl(/*timeoutSeconds=*/20);
  StuckNccl stuck(*loopback);
  NcclTransport::Options options;
  options.teardownSeconds = 0.2;
  auto start = std::chrono::steady_clock::now();
  onNcclRanks(2, stuck, options, [](NcclTransport &t) {
    t.createGroups({{{0, 1}, 0}});
  });
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  EXPECT(stuck.aborted == 2); // 2 ranks x the group
  EXPECT(stuck.destroyed == 0);
  EXPECT(seconds >= 0.2 && seconds < 10);
  // A stream that drains: the communicators are destroyed.
  StuckNccl idle(*loopback);
  idle.busy = false;
  onNcclRanks(2, idle, options, [](NcclTransport &t) {
    t.createGroups({{{0, 1}, 0}});
  });
  EXPECT(idle.aborted == 0);
  EXPECT(idle.destroyed == 2);
}

/// The executable's device channel: a Channel over NcclTransport (the
/// loopback: its copies and scratch through the NcclApi), ids exchanged
/// through the host channel's world group without replacing its groups,
/// runs every collective of ChannelChecks.h; the host channel still works
/// afterwards.
void testChannelOverNccl() {
  std::unique_ptr<NcclApi> api = loopbackNccl(/*timeoutSeconds=*/20);
  std::shared_ptr<ThreadHub> hub = makeThreadHub(4, 30);
  std::vector<std::thread> ranks;
  for (int64_t r = 0; r < 4; ++r)
    ranks.emplace_back([&, r] {
      std::unique_ptr<Transport> bootstrap = threadTransport(hub, r);
      try {
        Grid grid({2, 2});
        Channel host(*bootstrap, grid, r, test::kCheckGroups);
        NcclTransport::Options options;
        options.api = api.get();
        options.bootstrapWorldGroup = 2; // axes [0, 1]: every rank, in order
        options.pipelineGroup = grid.group(r, {0}); // the checks' transfers
        NcclTransport device(*bootstrap, static_cast<int>(r), options);
        test::checkChannel(device, r);
        // The host channel's groups are still its own: a sum over axis 1.
        float x = static_cast<float>(r), sum = 0;
        host.run(test::desc(OBER_COLL_ALL_REDUCE, {1}, {1}, 1), &x, &sum);
        int64_t first = r - r % 2;
        std::lock_guard<std::mutex> lock(test::checks);
        EXPECT(sum == static_cast<float>(2 * first + 1));
      } catch (const std::exception &e) {
        std::fprintf(stderr, "rank %lld: %s\n", static_cast<long long>(r),
                     e.what());
        EXPECT(!"a rank of the NCCL channel threw");
        failThreadHub(*hub, e.what());
      }
    });
  for (std::thread &t : ranks)
    t.join();
}

//===----------------------------------------------------------------------===//
// The caching allocator over a fake device
//===----------------------------------------------------------------------===//

/// A device of `capacity` bytes handing out made-up addresses; markers
/// pass when the test finishes their stream or the device synchronizes.
class FakeBackend final : public MemoryBackend {
public:
  explicit FakeBackend(size_t capacity) : capacity(capacity) {}

  void *allocate(size_t bytes) override {
    if (used + bytes > capacity)
      return nullptr;
    used += bytes;
    auto *p = reinterpret_cast<void *>(next);
    next += bytes + 4096; // gaps: neighbouring segments never touch
    live[p] = bytes;
    return p;
  }
  void release(void *memory) override {
    used -= live.at(memory);
    live.erase(memory);
  }
  void synchronize() override {
    ++synchronizations;
    for (auto &[marker, stream] : markers)
      passed[marker] = true;
  }
  void *recordMarker(StreamKey stream) override {
    auto *marker = reinterpret_cast<void *>(++markerCount);
    markers[marker] = stream;
    return marker;
  }
  bool markerPassed(void *marker) override { return passed[marker]; }
  void destroyMarker(void *marker) override {
    markers.erase(marker);
    ++destroyedMarkers;
  }
  size_t totalBytes() const override { return capacity; }
  std::string describe() const override { return "the fake device"; }

  /// The work queued so far on `stream` has finished.
  void finish(StreamKey stream) {
    for (auto &[marker, s] : markers)
      if (s == stream)
        passed[marker] = true;
  }

  size_t capacity, used = 0;
  uintptr_t next = 0x100000;
  std::map<void *, size_t> live;
  std::map<void *, StreamKey> markers;
  std::map<void *, bool> passed;
  uintptr_t markerCount = 0;
  int synchronizations = 0, destroyedMarkers = 0;
};

// Streams are opaque keys to the allocator.
const StreamKey s1 = reinterpret_cast<StreamKey>(0x11);
const StreamKey s2 = reinterpret_cast<StreamKey>(0x22);
const StreamKey s3 = reinterpret_cast<StreamKey>(0x33);

void testRounding() {
  EXPECT(CachingAllocator::roundSize(1) == 512);
  EXPECT(CachingAllocator::roundSize(512) == 512);
  EXPECT(CachingAllocator::roundSize(513) == 1024);
  EXPECT(CachingAllocator::roundSize(MiB) == MiB);
  EXPECT(CachingAllocator::roundSize(MiB + 1) == 2 * MiB);
  EXPECT(CachingAllocator::roundSize(3 * MiB) == 4 * MiB);
  FakeBackend device(64 * MiB);
  CachingAllocator allocator(device);
  EXPECT(allocator.allocate(0, s1) == nullptr);
  void *p = allocator.allocate(700, s1);
  EXPECT(allocator.blockSize(p) == 1024);
  // A small block is carved from a 2 MiB segment.
  EXPECT(allocator.stats().reserved == CachingAllocator::kSmallSegment);
  allocator.free(p);
}

void testReuseAndSplitting() {
  FakeBackend device(64 * MiB);
  CachingAllocator allocator(device);
  char *a = static_cast<char *>(allocator.allocate(1000, s1));
  char *b = static_cast<char *>(allocator.allocate(1000, s1));
  EXPECT(b == a + 1024); // the same segment, split
  EXPECT(allocator.stats().driverAllocations == 1);
  allocator.free(a);
  EXPECT(allocator.allocate(900, s1) == a); // reused, not reallocated
  EXPECT(allocator.stats().driverAllocations == 1);

  // A large block splits when the rest is over 1 MiB, and merges back.
  char *big = static_cast<char *>(allocator.allocate(10 * MiB, s1));
  EXPECT(allocator.stats().driverAllocations == 2);
  allocator.free(big);
  char *first = static_cast<char *>(allocator.allocate(4 * MiB, s1));
  char *second = static_cast<char *>(allocator.allocate(6 * MiB, s1));
  EXPECT(first == big && second == big + 4 * MiB);
  EXPECT(allocator.stats().driverAllocations == 2);
  allocator.free(first);
  allocator.free(second);
  EXPECT(allocator.allocate(10 * MiB, s1) == big); // merged again
  EXPECT(allocator.stats().driverAllocations == 2);

  std::string e = errorOf<std::invalid_argument>(
      [&] { allocator.free(reinterpret_cast<void *>(0x42)); });
  EXPECT(contains(e, "not a block of this allocator"));
}

void testStreams() {
  FakeBackend device(64 * MiB);
  CachingAllocator allocator(device);
  void *a = allocator.allocate(1000, s1);
  allocator.free(a);
  // Another stream's work may still be queued behind s1's: no reuse.
  void *b = allocator.allocate(1000, s2);
  EXPECT(b != a);
  EXPECT(allocator.stats().driverAllocations == 2);

  // A block also used on s2 waits, once freed, for s2's work.
  void *x = allocator.allocate(1000, s1);
  allocator.recordStream(x, s2);
  allocator.free(x);
  void *y = allocator.allocate(1000, s1);
  EXPECT(y != x);
  device.finish(s2);
  EXPECT(allocator.allocate(1000, s1) == x);
  EXPECT(device.destroyedMarkers == 1);

  // A retired stream's cache serves the next stream that asks.
  void *r = allocator.allocate(5 * MiB, s3);
  allocator.free(r);
  allocator.retireStream(s3);
  size_t before = allocator.stats().driverAllocations;
  EXPECT(allocator.allocate(5 * MiB, s2) == r);
  EXPECT(allocator.stats().driverAllocations == before);
}

void testOutOfMemory() {
  FakeBackend device(64 * MiB);
  CachingAllocator allocator(device);
  void *a = allocator.allocate(40 * MiB, s1);
  allocator.free(a); // cached for s1
  EXPECT(allocator.stats().cached() == 40 * MiB);
  // s2 cannot use s1's block; the device is full until the cache is
  // emptied, then the request succeeds.
  void *b = allocator.allocate(40 * MiB, s2);
  EXPECT(b != nullptr);
  AllocatorStats s = allocator.stats();
  EXPECT(s.cacheFlushes == 1 && s.driverReleases == 1);
  EXPECT(device.synchronizations == 1);
  EXPECT(s.reserved == 40 * MiB && s.inUse == 40 * MiB);

  std::string e =
      errorOf<OutOfMemoryError>([&] { allocator.allocate(30 * MiB, s2); });
  EXPECT(startsWith(e, "out of device memory on the fake device"));
  EXPECT(contains(e, "cannot allocate 31457280 bytes"));
  EXPECT(contains(e, "41943040 bytes (0.04 GiB) in use"));
  EXPECT(contains(e, "0 bytes (0.00 GiB) cached"));
  EXPECT(contains(e, "67108864 bytes (0.06 GiB) total"));
  EXPECT(allocator.stats().cacheFlushes == 2);
}

void testStatistics() {
  FakeBackend device(64 * MiB);
  CachingAllocator allocator(device);
  void *a = allocator.allocate(3 * MiB, s1); // 4 MiB
  void *b = allocator.allocate(100, s1);     // 512 B
  EXPECT(allocator.stats().inUse == 4 * MiB + 512);
  allocator.free(a);
  void *c = allocator.allocate(MiB, s1); // small: 1 MiB
  AllocatorStats s = allocator.stats();
  EXPECT(s.inUse == MiB + 512);
  EXPECT(s.peakInUse == 4 * MiB + 512);
  EXPECT(s.reserved == 4 * MiB + CachingAllocator::kSmallSegment);
  allocator.resetPeak();
  EXPECT(allocator.stats().peakInUse == MiB + 512);
  allocator.free(b);
  allocator.free(c);
  allocator.emptyCache();
  s = allocator.stats();
  EXPECT(s.inUse == 0 && s.reserved == 0 && device.used == 0);
  EXPECT(s.driverAllocations == 2 && s.driverReleases == 2);
}

//===----------------------------------------------------------------------===//
// Device code and GEMM validation
//===----------------------------------------------------------------------===//

void testImageFormats() {
  const unsigned char fatbin[] = {0x50, 0xED, 0x55, 0xBA, 1, 0, 0, 0};
  const unsigned char elf[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  const char ptx[] = ".version 7.0\n.target sm_75\n";
  const unsigned char junk[] = {1, 2, 3, 4, 5, 0xff};
  EXPECT(detectImageFormat(fatbin, sizeof(fatbin)) == ImageFormat::Fatbin);
  EXPECT(detectImageFormat(elf, sizeof(elf)) == ImageFormat::Cubin);
  EXPECT(detectImageFormat(ptx, sizeof(ptx)) == ImageFormat::PTX);
  EXPECT(detectImageFormat(ptx, sizeof(ptx) - 1) == ImageFormat::PTX);
  EXPECT(detectImageFormat(junk, sizeof(junk)) == ImageFormat::Auto);
  KernelModule module(ptx, sizeof(ptx) - 1);
  EXPECT(module.format() == ImageFormat::PTX && !module.loaded());
}

void testGemmTypes() {
  GemmDesc d = gemmDescFor(GemmPrecision::BF16, 8, 8, 8);
  d.a = d.b = DType::I8;
  d.c = DType::I32;
  std::string e =
      errorOf<CudaError>([&] { gemm(d, nullptr, nullptr, nullptr, nullptr); });
  EXPECT(contains(e, "unsupported element types A=int8, B=int8, C=int32"));
  EXPECT(contains(e, "supported (A, B -> C): bfloat16, bfloat16 -> bfloat16"));
  d = gemmDescFor(GemmPrecision::BF16, 8, 8, 8);
  d.tf32 = true;
  e = errorOf<CudaError>([&] { gemm(d, nullptr, nullptr, nullptr, nullptr); });
  EXPECT(contains(e, "A=bfloat16, B=bfloat16, C=bfloat16 with tf32"));
  d = gemmDescFor(GemmPrecision::F32, 8, 0, 8);
  e = errorOf<CudaError>([&] { gemm(d, nullptr, nullptr, nullptr, nullptr); });
  EXPECT(contains(e, "sizes must be positive"));
  EXPECT(std::string(gemmPrecisionName(GemmPrecision::TF32)) == "tf32");
}

/// Whether libcuda.so.1 is mapped into this process.
bool driverLoaded() {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

/// What MLIR's global constructors do: register images, before anything
/// else of the runtime ran. No driver may be loaded by it.
void testModuleRegistration() {
  static const char blob[] = "not really a fatbin";
  static const char ptx[] = ".version 7.0\n.target sm_75\n.address_size 64\n";
  void *m = mgpuModuleLoad(const_cast<char *>(blob), sizeof(blob));
  void *again = mgpuModuleLoad(const_cast<char *>(blob), sizeof(blob));
  void *jit = mgpuModuleLoadJIT(const_cast<char *>(ptx), 2);
  EXPECT(m != nullptr && jit != nullptr);
  EXPECT(again == m && jit != m);
  EXPECT(!driverLoaded());
  mgpuModuleUnload(again);
  mgpuModuleUnload(m);
  mgpuModuleUnload(jit);
  EXPECT(!driverLoaded());
}

/// The exit status and stderr of `f` run in a child process.
template <typename F> std::pair<int, std::string> inChild(F f) {
  int pipeFds[2];
  if (pipe(pipeFds) != 0)
    return {-1, ""};
  std::fflush(stdout); // the child's exit must not print our buffer again
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipeFds[1], 2);
    f();
    _exit(0);
  }
  close(pipeFds[1]);
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof(buffer))) > 0;)
    text.append(buffer, n);
  close(pipeFds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

/// A program on several GPUs asks for eager kernel loading before the
/// driver starts: the environment says EAGER unless the user chose a mode,
/// and once the driver started, asking changes nothing.
void testEagerLoading() {
  auto asks = [](const char *userMode) {
    return inChild([userMode] {
      if (userMode)
        setenv("CUDA_MODULE_LOADING", userMode, 1);
      else
        unsetenv("CUDA_MODULE_LOADING");
      bool early = preferEagerKernelLoading();
      std::string wanted = userMode ? userMode : "EAGER";
      bool started = errorOf<CudaError>([] { driver(); }).empty();
      const char *mode = std::getenv("CUDA_MODULE_LOADING");
      bool ok = early && mode && mode == wanted &&
                (!started || lazyKernelLoading() == (wanted == "LAZY"));
      std::fprintf(stderr, "%s", mode ? mode : "(unset)");
      _exit(ok ? 0 : 1);
    });
  };
  auto [status, mode] = asks(nullptr);
  EXPECT(status == 0 && mode == "EAGER");
  std::tie(status, mode) = asks("LAZY");
  EXPECT(status == 0 && mode == "LAZY");
  auto late = inChild([] {
    unsetenv("CUDA_MODULE_LOADING");
    (void)errorOf<CudaError>([] { driver(); });
    bool early = preferEagerKernelLoading();
    _exit(!early && !std::getenv("CUDA_MODULE_LOADING") ? 0 : 1);
  });
  EXPECT(late.first == 0);
}

/// Without a driver every entry point fails with "no CUDA device: ...".
void testWithoutDriver() {
  std::string e = errorOf<CudaError>([] { driver(); });
  if (e.empty()) {
    std::printf("note: a CUDA device is present; skipping the no-device "
                "checks\n");
    return;
  }
  std::printf("note: %s\n", e.c_str());
  EXPECT(startsWith(e, "no CUDA device: "));
  EXPECT(errorOf<CudaError>([] { Device device(0); }) == e);
  EXPECT(errorOf<CudaError>([] { deviceAllocator(0); }) == e);
  EXPECT(errorOf<CudaError>([] { Stream stream; }) == e);
  EXPECT(errorOf<CudaError>([] {
           KernelModule m(".version 7.0\n", 13);
           m.getFunction("k");
         }) == e);
  std::string n = errorOf<std::runtime_error>([] {
    auto hub = makeThreadHub(1, 5);
    auto bootstrap = threadTransport(hub, 0);
    NcclTransport transport(*bootstrap, 0);
  });
  EXPECT(startsWith(n, "no CUDA device: ") || startsWith(n, "NCCL not found"));
  auto [status, text] = inChild([] { mgpuStreamCreate(); });
  EXPECT(status == OBER_RT_EXIT_GPU);
  EXPECT(startsWith(text, "ober: mgpuStreamCreate: no CUDA device: "));
}
} // namespace

/// --profile-kernels' table: times summed by name, the most first, per
/// step, with their shares of the device time and of the steps' time.
void testKernelTimes() {
  KernelTimes t;
  t.add("gemm", 3.0);
  t.add("softmax", 1.0);
  t.add("gemm", 5.0);
  t.add("add", 1.0);
  std::vector<KernelTimes::Row> rows = t.rows();
  EXPECT(rows.size() == 3 && rows[0].name == "gemm" && rows[0].calls == 2 &&
         rows[0].milliseconds == 8.0);
  EXPECT(rows[1].name == "add" && rows[2].name == "softmax"); // ties by name
  EXPECT(t.totalMilliseconds() == 10.0);
  char *text = nullptr;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  t.print(out, "rank 0", /*steps=*/2, /*wallSeconds=*/0.04, /*top=*/2);
  std::fclose(out);
  std::string s(text, size);
  std::free(text);
  EXPECT(contains(s, "rank 0: 5.000 ms of device time a step in 2 calls "
                     "(25.0% of the steps' 0.020 s)"));
  EXPECT(contains(s, "4.000  80.0%        1.0  gemm"));
  EXPECT(contains(s, "0.500  10.0%        0.5  add")); // 1 call over 2 steps
  EXPECT(!contains(s, "softmax") && contains(s, "(1 more)"));
}

int main() {
  testModuleRegistration(); // first: nothing may have loaded the driver
  testEagerLoading();       // in children, before the driver is loaded
  testKernelTimes();
  testNcclMapping();
  testNcclLoopback();
  testPipelineTransfers();
  testPipelinePairs();
  testNcclTeardown();
  testChannelOverNccl();
  testRounding();
  testReuseAndSplitting();
  testStreams();
  testOutOfMemory();
  testStatistics();
  testImageFormats();
  testGemmTypes();
  testWithoutDriver();
  return testSummary();
}
