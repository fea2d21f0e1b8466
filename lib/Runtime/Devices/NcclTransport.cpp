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

/// The id file of `spec` in the `generation`-th createGroups call.
std::string idFileName(const std::string &dir, int generation,
                       const GroupSpec &spec) {
  uint64_t hash = 1469598103934665603ull; // FNV-1a over the members
  for (int64_t member : spec.members)
    hash = (hash ^ static_cast<uint64_t>(member)) * 1099511628211ull;
  char name[96];
  std::snprintf(name, sizeof(name), "/ober-nccl-id-%d-%zu-%016llx", generation,
                spec.members.size(), static_cast<unsigned long long>(hash));
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

NcclApi::StreamState NcclTransport::drain(double seconds) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  auto pause = std::chrono::microseconds(100);
  NcclApi::StreamState state;
  while ((state = api.query(stream())) == NcclApi::StreamState::Busy &&
         Clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2,
                                                std::chrono::milliseconds(50));
  }
  return state;
}

void NcclTransport::releaseCommunicators(bool abort) {
  auto release = [&](ncclComm_t comm) {
    if (comm)
      abort ? api.commAbort(comm) : api.commDestroy(comm);
  };
  for (Group &g : groups)
    release(g.comm);
  release(world.comm);
  groups.clear();
  world = Group();
}

void NcclTransport::createGroups(const std::vector<GroupSpec> &specs) {
  api.useDevice(ordinal);
  releaseCommunicators(/*abort=*/false);
  ++generation;
  std::vector<GroupSpec> all = specs;
  GroupSpec everyone;
  for (int64_t r = 0; r < size(); ++r)
    everyone.members.push_back(r);
  all.push_back(everyone);
  std::vector<ncclUniqueId> ids;
  exchangeIds(all, ids);
  std::vector<Group> made;
  for (size_t i = 0; i < all.size(); ++i) {
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
  world = made.back();
  made.pop_back();
  groups = std::move(made);
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
    return;
  }
  if (options.idDirectory.empty())
    bootstrap.createGroups(specs);
  for (size_t i = 0; i < specs.size(); ++i) {
    bool first = specs[i].members.front() == rank();
    if (!options.idDirectory.empty()) {
      ids[i] = idFromFile(specs[i], first);
      continue;
    }
    if (first)
      checkNccl(api.getUniqueId(&ids[i]), "ncclGetUniqueId");
    bootstrap.broadcast(i, &ids[i], sizeof(ncclUniqueId), /*root=*/0);
  }
}

ncclUniqueId NcclTransport::idFromFile(const GroupSpec &spec, bool first) {
  std::string path = idFileName(options.idDirectory, generation, spec);
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

void NcclTransport::requireWorld(const char *operation) const {
  if (!world.comm)
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

void NcclTransport::send(int64_t to, int64_t /*tag*/, const void *data,
                         int64_t bytes) {
  requireWorld("send");
  begin(nullptr);
  // The caller may reuse `data` once this returns: send a copy, made
  // before returning (the send itself completes when `to` receives).
  size_t size = countOf(bytes, "send");
  void *copy = api.allocate(ordinal, size, stream());
  api.copy(copy, data, size, stream());
  api.synchronize(stream());
  ncclResult_t r = api.send(copy, size, ncclUint8, static_cast<int>(to),
                            world.comm, stream());
  api.release(ordinal, copy); // reused only after the send, in stream order
  checkNccl(r, "ncclSend of " + std::to_string(bytes) + " bytes to rank " +
                   std::to_string(to));
}

void NcclTransport::recv(int64_t from, int64_t /*tag*/, void *data,
                         int64_t bytes) {
  requireWorld("recv");
  begin(nullptr);
  checkNccl(api.recv(data, countOf(bytes, "recv"), ncclUint8,
                     static_cast<int>(from), world.comm, stream()),
            "ncclRecv of " + std::to_string(bytes) + " bytes from rank " +
                std::to_string(from));
  finish(nullptr);
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
