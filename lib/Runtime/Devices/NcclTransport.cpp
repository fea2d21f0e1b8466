//===- NcclTransport.cpp - collectives between GPUs through NCCL ----------===//
//
// Part of Ober-Train's runtime (no MLIR). Every operation first makes the
// rank's device current: the channel calls a transport from its own
// thread. NCCL and the driver are reached only through the NcclApi, so
// this file runs unchanged over the loopback NCCL in tests.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/NCCL.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {
size_t countOf(int64_t n, const char *what) {
  if (n < 0)
    throw CommError(std::string(what) + ": negative count " +
                    std::to_string(n));
  return static_cast<size_t>(n);
}

/// The id file of `spec` in the `generation`-th createGroups call; `kind`
/// tells a group's ("id") from a pipeline pair's ("pair").
std::string idFileName(const std::string &dir, int generation,
                       const GroupSpec &spec, const char *kind) {
  uint64_t hash = 1469598103934665603ull; // FNV-1a over the members
  for (int64_t member : spec.members)
    hash = (hash ^ static_cast<uint64_t>(member)) * 1099511628211ull;
  char name[112];
  std::snprintf(name, sizeof(name), "/ober-nccl-%s-%d-%zu-%016llx", kind,
                generation, spec.members.size(),
                static_cast<unsigned long long>(hash));
  return dir + name;
}
} // namespace

//===----------------------------------------------------------------------===//
// NcclTransport: communicators
//===----------------------------------------------------------------------===//

NcclTransport::NcclTransport(Transport &bootstrap, int device, Options options)
    : bootstrap(bootstrap), ordinal(device), options(std::move(options)),
      // systemNccl() opens NCCL: fail here, not in the middle of a step.
      api(this->options.api ? *this->options.api : systemNccl()) {
  api.useDevice(ordinal);
  commStream = api.createStream();
}

NcclTransport::~NcclTransport() {
  using State = NcclApi::StreamState;
  State state = State::Failed;
  try {
    api.useDevice(ordinal);
    state = drain(options.teardownSeconds);
  } catch (...) {
    // Tearing down after a failure: abort below.
  }
  if (state == State::Busy)
    std::fprintf(stderr,
                 "error: rank %lld: NCCL operations still queued %g s "
                 "after its transport closed (a rank failed or left): "
                 "aborting its communicators\n",
                 static_cast<long long>(rank()), options.teardownSeconds);
  // After an error or a timeout NCCL's communicators are aborted (their
  // queued kernels return), not destroyed (which waits for them).
  releaseCommunicators(/*abort=*/state != State::Idle);
  try {
    if (state == State::Idle || drain(options.teardownSeconds) == State::Idle)
      api.retireStream(ordinal, stream());
  } catch (...) {
  }
}

void NcclTransport::closePairs(bool abort) {
  // In the order they were made (the same on every rank): destroying a
  // communicator may wait for its peer.
  forEachPair([&](bool sends, int64_t peer, size_t) {
    std::map<int64_t, Pair> &pairs = sends ? sending : receiving;
    auto found = pairs.find(peer);
    if (found == pairs.end())
      return;
    Pair &pair = found->second;
    if (pair.comm)
      abort ? api.commAbort(pair.comm) : api.commDestroy(pair.comm);
    if (abort)
      return; // its stream may still use the memory
    api.release(ordinal, pair.header);
    for (auto &[tag, messages] : pair.kept)
      for (const Pair::Kept &m : messages)
        api.release(ordinal, m.data);
    api.retireStream(ordinal, pair.stream.get());
  });
  sending.clear();
  receiving.clear();
}

bool NcclTransport::connects(size_t from, size_t to) const {
  const auto &pairs = options.pipelinePairs;
  return from != to &&
         (pairs.empty() ||
          std::find(pairs.begin(), pairs.end(),
                    std::pair<int64_t, int64_t>(from, to)) != pairs.end());
}

void NcclTransport::forEachPair(
    const std::function<void(bool sends, int64_t peer, size_t pair)> &visit)
    const {
  const std::vector<int64_t> &members = options.pipelineGroup;
  size_t n = members.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (connects(i, j) && (members[i] == rank() || members[j] == rank()))
        visit(members[i] == rank(), members[members[i] == rank() ? j : i],
              i * n + j);
}

NcclApi::StreamState NcclTransport::drain(double seconds) {
  using Clock = std::chrono::steady_clock;
  using State = NcclApi::StreamState;
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  auto pause = std::chrono::microseconds(100);
  auto state = [&] {
    std::vector<CUstream> streams = {stream()};
    for (auto *pairs : {&sending, &receiving})
      for (auto &[peer, pair] : *pairs)
        streams.push_back(pair.stream.get());
    State worst = State::Idle;
    for (CUstream s : streams) {
      State now = api.query(s);
      if (now == State::Failed)
        return now;
      if (now == State::Busy)
        worst = now;
    }
    return worst;
  };
  State now;
  while ((now = state()) == State::Busy && Clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2,
                                                std::chrono::milliseconds(50));
  }
  return now;
}

void NcclTransport::releaseCommunicators(bool abort) {
  auto release = [&](ncclComm_t comm) {
    if (comm)
      abort ? api.commAbort(comm) : api.commDestroy(comm);
  };
  for (Group &g : groups)
    release(g.comm);
  groups.clear();
  closePairs(abort);
  created = false;
}

void NcclTransport::createGroups(const std::vector<GroupSpec> &specs) {
  api.useDevice(ordinal);
  releaseCommunicators(/*abort=*/false);
  ++generation;
  std::vector<GroupSpec> all = specs;
  if (options.idDirectory.empty() && options.bootstrapWorldGroup < 0) {
    // The bootstrap's groups become these, with everyone last: the pairs'
    // ids travel through it.
    GroupSpec everyone;
    for (int64_t r = 0; r < size(); ++r)
      everyone.members.push_back(r);
    all.push_back(everyone);
  }
  std::vector<ncclUniqueId> ids;
  exchangeIds(all, ids);
  std::vector<Group> made;
  for (size_t i = 0; i < specs.size(); ++i) {
    Group g;
    g.members = all[i].members;
    while (g.members[g.index] != rank())
      ++g.index;
    checkNccl(api.commInitRank(&g.comm, static_cast<int>(g.members.size()),
                               ids[i], g.index),
              "ncclCommInitRank (group " + std::to_string(i) + " of " +
                  std::to_string(g.members.size()) + " ranks)");
    made.push_back(std::move(g));
  }
  groups = std::move(made);
  created = true;
  connectPipeline();
}

void NcclTransport::exchangeIds(const std::vector<GroupSpec> &specs,
                                std::vector<ncclUniqueId> &ids) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::vector<int64_t> &members = specs[i].members;
    if (std::find(members.begin(), members.end(), rank()) == members.end())
      throw CommError("NcclTransport::createGroups: rank " +
                      std::to_string(rank()) + " is not a member of group " +
                      std::to_string(i));
  }
  ids.assign(specs.size(), ncclUniqueId{});
  if (options.idDirectory.empty() && options.bootstrapWorldGroup >= 0) {
    // Each group's first member makes its id; one all-gather of every
    // rank's slots gives each rank its groups' ids.
    std::vector<ncclUniqueId> mine(specs.size()), all(specs.size() * size());
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].members.front() == rank())
        checkNccl(api.getUniqueId(&mine[i]), "ncclGetUniqueId");
    bootstrap.allGather(static_cast<size_t>(options.bootstrapWorldGroup),
                        mine.data(), all.data(),
                        static_cast<int64_t>(mine.size() * sizeof(ncclUniqueId)));
    for (size_t i = 0; i < specs.size(); ++i)
      ids[i] = all[specs[i].members.front() * specs.size() + i];
    bootstrapWorld = options.bootstrapWorldGroup;
    return;
  }
  bootstrapWorld = -1;
  if (options.idDirectory.empty()) {
    bootstrap.createGroups(specs);
    bootstrapWorld = static_cast<int64_t>(specs.size()) - 1; // everyone
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    bool first = specs[i].members.front() == rank();
    if (!options.idDirectory.empty()) {
      ids[i] = idFromFile(specs[i], first, "id");
      continue;
    }
    if (first)
      checkNccl(api.getUniqueId(&ids[i]), "ncclGetUniqueId");
    bootstrap.broadcast(i, &ids[i], sizeof(ncclUniqueId), /*root=*/0);
  }
}

ncclUniqueId NcclTransport::idFromFile(const GroupSpec &spec, bool first,
                                       const char *kind) {
  std::string path = idFileName(options.idDirectory, generation, spec, kind);
  ncclUniqueId id{};
  if (first) {
    checkNccl(api.getUniqueId(&id), "ncclGetUniqueId");
    std::string partial = path + ".part" + std::to_string(rank());
    std::ofstream(partial, std::ios::binary)
        .write(id.internal, sizeof(id.internal));
    if (std::rename(partial.c_str(), path.c_str()) != 0)
      throw CommError("cannot write the NCCL id file " + path);
    return id;
  }
  auto start = std::chrono::steady_clock::now();
  while (true) {
    std::ifstream in(path, std::ios::binary);
    if (in.read(id.internal, sizeof(id.internal)))
      return id;
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (waited.count() > options.idTimeoutSeconds)
      throw CommError("no NCCL id file " + path + " from rank " +
                      std::to_string(spec.members.front()) + " after " +
                      std::to_string(int(options.idTimeoutSeconds)) + " s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

const NcclTransport::Group &NcclTransport::group(size_t g,
                                                 const char *operation) const {
  if (g >= groups.size())
    throw CommError(std::string(operation) + ": no group " + std::to_string(g) +
                    " (createGroups made " + std::to_string(groups.size()) +
                    ")");
  return groups[g];
}

//===----------------------------------------------------------------------===//
// NcclTransport: collectives
//===----------------------------------------------------------------------===//

void NcclTransport::requireGroups(const char *operation) const {
  if (!created)
    throw CommError(std::string(operation) +
                    ": NcclTransport::createGroups has not been called");
}

void NcclTransport::checkNccl(ncclResult_t result,
                              const std::string &what) const {
  if (result != ncclSuccess)
    throw CommError(what + " failed: " + api.errorString(result));
}

void NcclTransport::begin(const Event *ready) {
  api.useDevice(ordinal);
  if (ready)
    api.waitFor(stream(), *ready);
}

void NcclTransport::finish(Event *done) {
  if (done)
    api.record(*done, stream());
  else
    api.synchronize(stream());
}

void NcclTransport::queueAllReduce(size_t g, const void *in, void *out,
                                   int64_t count, DType type, int reduction) {
  const Group &grp = group(g, "all-reduce");
  checkNccl(api.allReduce(in, out, countOf(count, "all-reduce"),
                          ncclTypeOf(type), ncclReductionOf(reduction, type),
                          grp.comm, stream()),
            "ncclAllReduce of " + std::to_string(count) + " " +
                dtypeName(type) + " in group " + std::to_string(g));
}

void NcclTransport::queueAllGather(size_t g, const void *in, void *out,
                                   int64_t bytes) {
  const Group &grp = group(g, "all-gather");
  checkNccl(api.allGather(in, out, countOf(bytes, "all-gather"), ncclUint8,
                          grp.comm, stream()),
            "ncclAllGather of " + std::to_string(bytes) + " bytes in group " +
                std::to_string(g));
}

void NcclTransport::queueReduceScatter(size_t g, const void *in, void *out,
                                       int64_t count, DType type,
                                       int reduction) {
  const Group &grp = group(g, "reduce-scatter");
  checkNccl(api.reduceScatter(
                in, out, countOf(count, "reduce-scatter"), ncclTypeOf(type),
                ncclReductionOf(reduction, type), grp.comm, stream()),
            "ncclReduceScatter of " + std::to_string(count) + " " +
                dtypeName(type) + " in group " + std::to_string(g));
}

void NcclTransport::queueAllToAll(size_t g, const void *in, void *out,
                                  int64_t bytes) {
  const Group &grp = group(g, "all-to-all");
  size_t block = countOf(bytes, "all-to-all");
  checkNccl(api.groupStart(), "ncclGroupStart");
  ncclResult_t failed = ncclSuccess;
  for (size_t m = 0; m < grp.members.size() && failed == ncclSuccess; ++m) {
    failed = api.send(static_cast<const char *>(in) + m * block, block,
                      ncclUint8, static_cast<int>(m), grp.comm, stream());
    if (failed == ncclSuccess)
      failed = api.recv(static_cast<char *>(out) + m * block, block, ncclUint8,
                        static_cast<int>(m), grp.comm, stream());
  }
  ncclResult_t ended = api.groupEnd(); // always close the group
  checkNccl(failed != ncclSuccess ? failed : ended,
            "all-to-all of " + std::to_string(bytes) +
                " bytes per member (ncclSend/ncclRecv) in group " +
                std::to_string(g));
}

void NcclTransport::queueBroadcast(size_t g, void *data, int64_t bytes,
                                   int64_t root) {
  const Group &grp = group(g, "broadcast");
  if (root < 0 || root >= static_cast<int64_t>(grp.members.size()))
    throw CommError("broadcast: root " + std::to_string(root) +
                    " is not a member index of group " + std::to_string(g));
  checkNccl(api.broadcast(data, data, countOf(bytes, "broadcast"), ncclUint8,
                          static_cast<int>(root), grp.comm, stream()),
            "ncclBroadcast of " + std::to_string(bytes) + " bytes in group " +
                std::to_string(g));
}

void NcclTransport::allReduce(size_t g, const void *in, void *out,
                              int64_t count, DType type, int reduction) {
  begin(nullptr);
  queueAllReduce(g, in, out, count, type, reduction);
  finish(nullptr);
}

void NcclTransport::allGather(size_t g, const void *in, void *out,
                              int64_t bytes) {
  begin(nullptr);
  queueAllGather(g, in, out, bytes);
  finish(nullptr);
}

void NcclTransport::reduceScatter(size_t g, const void *in, void *out,
                                  int64_t count, DType type, int reduction) {
  begin(nullptr);
  queueReduceScatter(g, in, out, count, type, reduction);
  finish(nullptr);
}

void NcclTransport::allToAll(size_t g, const void *in, void *out,
                             int64_t bytes) {
  begin(nullptr);
  queueAllToAll(g, in, out, bytes);
  finish(nullptr);
}

void NcclTransport::broadcast(size_t g, void *data, int64_t bytes,
                              int64_t root) {
  begin(nullptr);
  queueBroadcast(g, data, bytes, root);
  finish(nullptr);
}

void NcclTransport::enqueueAllReduce(size_t g, const void *in, void *out,
                                     int64_t count, DType type, int reduction,
                                     Event &done, const Event *ready) {
  begin(ready);
  queueAllReduce(g, in, out, count, type, reduction);
  finish(&done);
}

void NcclTransport::enqueueAllGather(size_t g, const void *in, void *out,
                                     int64_t bytes, Event &done,
                                     const Event *ready) {
  begin(ready);
  queueAllGather(g, in, out, bytes);
  finish(&done);
}

void NcclTransport::enqueueReduceScatter(size_t g, const void *in, void *out,
                                         int64_t count, DType type,
                                         int reduction, Event &done,
                                         const Event *ready) {
  begin(ready);
  queueReduceScatter(g, in, out, count, type, reduction);
  finish(&done);
}

void NcclTransport::enqueueAllToAll(size_t g, const void *in, void *out,
                                    int64_t bytes, Event &done,
                                    const Event *ready) {
  begin(ready);
  queueAllToAll(g, in, out, bytes);
  finish(&done);
}

void NcclTransport::enqueueBroadcast(size_t g, void *data, int64_t bytes,
                                     int64_t root, Event &done,
                                     const Event *ready) {
  begin(ready);
  queueBroadcast(g, data, bytes, root);
  finish(&done);
}

//===----------------------------------------------------------------------===//
// NcclTransport: pipeline transfers
//===----------------------------------------------------------------------===//

namespace {
/// A message's header: its tag and its bytes, as 32-bit words (set on the
/// device by fill32, read back to the host).
constexpr size_t kHeaderWords = 4, kHeaderBytes = kHeaderWords * 4;

std::pair<int64_t, int64_t> parseHeader(const uint32_t (&words)[kHeaderWords]) {
  auto wide = [](uint32_t low, uint32_t high) {
    return static_cast<int64_t>(static_cast<uint64_t>(high) << 32 | low);
  };
  return {wide(words[0], words[1]), wide(words[2], words[3])};
}
} // namespace

std::vector<ncclUniqueId> NcclTransport::pairIds() {
  const std::vector<int64_t> &members = options.pipelineGroup;
  size_t n = members.size();
  auto index = static_cast<size_t>(
      std::find(members.begin(), members.end(), rank()) - members.begin());
  // The sender of each pair makes its id.
  std::vector<ncclUniqueId> mine(n), ids(n * n);
  if (!options.idDirectory.empty()) {
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (connects(i, j) && (i == index || j == index))
          ids[i * n + j] =
              idFromFile({{members[i], members[j]}}, i == index, "pair");
    return ids;
  }
  for (size_t j = 0; j < n; ++j)
    if (connects(index, j))
      checkNccl(api.getUniqueId(&mine[j]), "ncclGetUniqueId");
  // Every rank's ids through the bootstrap's world group.
  std::vector<ncclUniqueId> gathered(n * size());
  bootstrap.allGather(static_cast<size_t>(bootstrapWorld), mine.data(),
                      gathered.data(),
                      static_cast<int64_t>(n * sizeof(ncclUniqueId)));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      ids[i * n + j] = gathered[members[i] * n + j];
  return ids;
}

void NcclTransport::checkPipelineSizes() {
  // A rank with another pipeline group size would wait for ids that never
  // come, or skip the exchange the others wait in: refused on every rank.
  int64_t mine = static_cast<int64_t>(options.pipelineGroup.size());
  std::vector<int64_t> sizes(size());
  bootstrap.allGather(static_cast<size_t>(bootstrapWorld), &mine, sizes.data(),
                      sizeof(mine));
  for (int64_t r = 0; r < size(); ++r)
    if (sizes[r] != mine && (sizes[r] > 1 || mine > 1))
      throw CommError("rank " + std::to_string(r) + " has a pipeline group of " +
                      std::to_string(sizes[r]) + " ranks, rank " +
                      std::to_string(rank()) + " one of " +
                      std::to_string(mine));
}

void NcclTransport::connectPipeline() {
  const std::vector<int64_t> &members = options.pipelineGroup;
  size_t n = members.size();
  if (options.idDirectory.empty())
    checkPipelineSizes();
  if (n <= 1)
    return;
  auto found = std::find(members.begin(), members.end(), rank());
  if (found == members.end())
    throw CommError("rank " + std::to_string(rank()) +
                    " is not in its own pipeline group");
  std::vector<ncclUniqueId> ids = pairIds();
  // Every pair in one order on every rank: a communicator's init and its
  // first transfer (NCCL connects a pair there) wait for both ranks.
  forEachPair([&](bool sends, int64_t peer, size_t id) {
    Pair &pair = (sends ? sending : receiving)[peer];
    std::string what = std::string(sends ? "to" : "from") + " rank " +
                       std::to_string(peer);
    checkNccl(api.commInitRank(&pair.comm, 2, ids[id], sends ? 0 : 1),
              "ncclCommInitRank (pipeline transfers " + what + ")");
    pair.stream = api.createStream();
    pair.header = api.allocate(ordinal, kHeaderBytes, pair.stream.get());
    api.fill32(pair.header, 0, kHeaderWords, pair.stream.get());
    checkNccl(sends ? api.send(pair.header, kHeaderBytes, ncclUint8, 1,
                               pair.comm, pair.stream.get())
                    : api.recv(pair.header, kHeaderBytes, ncclUint8, 0,
                               pair.comm, pair.stream.get()),
              "connecting pipeline transfers " + what);
    api.synchronize(pair.stream.get());
  });
}

NcclTransport::Pair &NcclTransport::pairWith(int64_t peer, bool sends,
                                             const char *operation) {
  requireGroups(operation);
  std::map<int64_t, Pair> &pairs = sends ? sending : receiving;
  auto found = pairs.find(peer);
  if (found == pairs.end())
    throw CommError(std::string(operation) + ": rank " + std::to_string(peer) +
                    " is not a pipeline peer rank " + std::to_string(rank()) +
                    (sends ? " sends to" : " receives from") +
                    " (Options::pipelineGroup and pipelinePairs)");
  return found->second;
}

void NcclTransport::send(int64_t to, int64_t tag, const void *data,
                         int64_t bytes) {
  Pair &pair = pairWith(to, /*sends=*/true, "send");
  begin(nullptr);
  // The caller may reuse `data` once this returns: the header and a copy
  // are made on the transport's stream, which waits for nobody, then sent
  // on the pair's stream, which waits for the peer's receive.
  size_t size = countOf(bytes, "send");
  auto *staged =
      static_cast<char *>(api.allocate(ordinal, kHeaderBytes + size, stream()));
  uint64_t t = static_cast<uint64_t>(tag), b = size;
  uint32_t words[kHeaderWords] = {uint32_t(t), uint32_t(t >> 32), uint32_t(b),
                                  uint32_t(b >> 32)};
  for (size_t w = 0; w < kHeaderWords; ++w)
    api.fill32(staged + 4 * w, words[w], 1, stream());
  if (size)
    api.copy(staged + kHeaderBytes, data, size, stream());
  api.synchronize(stream());
  CUstream on = pair.stream.get();
  api.useOn(ordinal, staged, on);
  std::string what = " of " + std::to_string(bytes) + " bytes (tag " +
                     std::to_string(tag) + ") to rank " + std::to_string(to);
  ncclResult_t r = api.send(staged, kHeaderBytes, ncclUint8, 1, pair.comm, on);
  if (r == ncclSuccess && size)
    r = api.send(staged + kHeaderBytes, size, ncclUint8, 1, pair.comm, on);
  api.release(ordinal, staged); // reused once the pair's stream passes it
  checkNccl(r, "ncclSend" + what);
}

std::pair<int64_t, int64_t> NcclTransport::nextHeader(int64_t from,
                                                      Pair &pair) {
  CUstream on = pair.stream.get();
  checkNccl(api.recv(pair.header, kHeaderBytes, ncclUint8, 0, pair.comm, on),
            "ncclRecv of a message header from rank " + std::to_string(from));
  // Wait for the peer first: a copy to pageable memory queued behind the
  // receive would wait inside the driver, where it may hold a lock that
  // another rank's thread of this process needs to allocate and send.
  api.synchronize(on);
  uint32_t words[kHeaderWords];
  api.copyToHost(words, pair.header, kHeaderBytes, on);
  api.synchronize(on);
  return parseHeader(words);
}

void NcclTransport::recv(int64_t from, int64_t tag, void *data,
                         int64_t bytes) {
  Pair &pair = pairWith(from, /*sends=*/false, "recv");
  size_t size = countOf(bytes, "recv");
  begin(nullptr);
  CUstream on = pair.stream.get();
  // `data` is written on the pair's stream after what the transport's
  // stream waits for (the kernels queued before the receive).
  api.follow(on, stream());
  auto mismatch = [&](int64_t sent) {
    return CommError("recv of " + std::to_string(bytes) + " bytes (tag " +
                     std::to_string(tag) + ") from rank " +
                     std::to_string(from) + ": the message sent with that tag " +
                     "has " + std::to_string(sent) + " bytes");
  };
  auto kept = pair.kept.find(tag);
  if (kept != pair.kept.end() && !kept->second.empty()) {
    Pair::Kept message = kept->second.front();
    kept->second.pop_front();
    if (message.bytes != bytes) {
      api.release(ordinal, message.data);
      throw mismatch(message.bytes);
    }
    if (size)
      api.copy(data, message.data, size, on);
    api.release(ordinal, message.data);
    api.synchronize(on);
    return;
  }
  for (;;) {
    auto [sentTag, sentBytes] = nextHeader(from, pair);
    if (sentBytes < 0)
      throw CommError("recv from rank " + std::to_string(from) +
                      ": a malformed message header (" +
                      std::to_string(sentBytes) + " bytes)");
    // Another tag's message is kept until a receive asks for it; one of
    // the wrong size is received (the pair stays in step) and refused.
    bool wanted = sentTag == tag && sentBytes == bytes;
    void *into = wanted ? data
                        : api.allocate(ordinal, static_cast<size_t>(sentBytes), on);
    if (sentBytes)
      checkNccl(api.recv(into, static_cast<size_t>(sentBytes), ncclUint8, 0,
                         pair.comm, on),
                "ncclRecv of " + std::to_string(sentBytes) + " bytes (tag " +
                    std::to_string(sentTag) + ") from rank " +
                    std::to_string(from));
    if (sentTag != tag) {
      pair.kept[sentTag].push_back({into, sentBytes});
      continue;
    }
    api.synchronize(on);
    if (wanted)
      return;
    api.release(ordinal, into);
    throw mismatch(sentBytes);
  }
}

//===----------------------------------------------------------------------===//
// NcclTransport: memory
//===----------------------------------------------------------------------===//

void NcclTransport::copyRows(void *dst, int64_t dstPitch, const void *src,
                             int64_t srcPitch, int64_t width, int64_t rows) {
  api.useDevice(ordinal);
  api.copyRows(dst, countOf(dstPitch, "copy"), src, countOf(srcPitch, "copy"),
               countOf(width, "copy"), countOf(rows, "copy"), stream());
  api.synchronize(stream());
}

std::shared_ptr<char> NcclTransport::scratch(int64_t bytes) {
  api.useDevice(ordinal);
  auto *memory = static_cast<char *>(api.allocate(
      ordinal, std::max<size_t>(countOf(bytes, "scratch"), 1), stream()));
  NcclApi *owner = &api;
  int device = ordinal;
  return std::shared_ptr<char>(
      memory, [owner, device](char *m) { owner->release(device, m); });
}

std::function<void()> NcclTransport::readyMarker() {
  std::shared_ptr<Event> point = api.markProgram();
  if (!point)
    return nullptr;
  return [this, point] {
    api.useDevice(ordinal);
    api.waitFor(stream(), *point);
  };
}
