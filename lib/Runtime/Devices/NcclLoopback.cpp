//===- NcclLoopback.cpp - NCCL's calls over host memory, for tests --------===//
//
// Part of Ober-Train's runtime (no MLIR). CI machines have neither a GPU
// nor NCCL, yet NcclTransport's plumbing (unique ids through the bootstrap
// or files, one communicator per group, dtype and reduction mapping, the
// grouped sends of all-to-all, error messages) deserves tests there. This
// NcclApi implements the calls the transport makes among the threads of
// one process: the ranks of a communicator meet in a rendezvous, each
// reading the others' host buffers, and reductions use reduceInto (so a
// bf16 sum rounds exactly as the host transports' do, reducing in member
// order). A stream is a thread running its work in order, and a send
// outside a group holds its stream until the peer has received it, as
// NCCL's does: a transport whose transfers could wait for each other
// deadlocks here too (and fails after the timeout) instead of passing.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/NCCL.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {

/// Marks ids made by a loopback (the rest of the id is the instance and a
/// counter), so that a foreign id is refused rather than waited on.
constexpr char kMagic[] = "ober-loopback-nccl";

/// The ranks of one communicator.
struct Clique {
  explicit Clique(int size)
      : size(size), joined(size), parts(size), signatures(size) {}
  int size;
  std::vector<bool> joined;
  int joinedCount = 0;
  // The rendezvous: each rank leaves its buffer and a description of the
  // operation; the last to arrive publishes them (`met`) for the round.
  std::vector<const void *> parts, met;
  std::vector<std::string> signatures;
  bool agreed = true;
  int arrived = 0;
  uint64_t round = 0;
  /// A rank timed out: every later operation fails.
  bool broken = false;
  /// Sent and not yet received messages, by (from, to), in order, and
  /// how many were ever sent and received.
  std::map<std::pair<int, int>, std::deque<std::vector<char>>> mail;
  std::map<std::pair<int, int>, uint64_t> sent, received;
};

/// A stream: a thread running the work queued on it in order. After a
/// failure the rest is skipped, and synchronize throws.
class LoopStream {
public:
  LoopStream() : worker([this] { loop(); }) {}
  ~LoopStream() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    worker.join();
  }
  /// Queues `work` (its result: ncclSuccess, or a failure's text).
  void push(std::function<std::string()> work) {
    std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(std::move(work));
    ++queued;
    changed.notify_all();
  }
  /// The work queued so far, for waitUntil.
  uint64_t mark() {
    std::lock_guard<std::mutex> lock(mutex);
    return queued;
  }
  /// Waits until the first `count` items have run; false after `timeout`.
  bool waitUntil(uint64_t count, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    return changed.wait_for(lock, timeout, [&] { return done >= count; });
  }
  /// Waits for the work queued so far; throws CommError on a failure.
  void synchronize() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return done == queued; });
    if (!failure.empty())
      throw CommError("loopback NCCL stream: " + failure);
  }
  NcclApi::StreamState state() {
    std::lock_guard<std::mutex> lock(mutex);
    return !failure.empty() ? NcclApi::StreamState::Failed
           : done < queued  ? NcclApi::StreamState::Busy
                            : NcclApi::StreamState::Idle;
  }

private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      std::function<std::string()> work = std::move(queue.front());
      queue.pop_front();
      bool skip = !failure.empty();
      lock.unlock();
      std::string error = skip ? std::string() : work();
      lock.lock();
      if (failure.empty())
        failure = error;
      ++done;
      changed.notify_all();
    }
  }
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::function<std::string()>> queue;
  uint64_t queued = 0, done = 0;
  std::string failure;
  bool stopping = false;
  std::thread worker; // last: started once the rest is ready
};

LoopStream *streamOf(CUstream stream) {
  return reinterpret_cast<LoopStream *>(stream);
}

struct Comm {
  std::shared_ptr<Clique> clique;
  int rank;
};

Comm &commOf(ncclComm_t comm) { return *reinterpret_cast<Comm *>(comm); }

/// What the calling thread's current error means (errorString's text).
thread_local std::string lastDetail;

/// The calling thread's ncclGroupStart nesting and the calls it deferred:
/// NCCL's group state is per thread too.
struct PendingGroup {
  int depth = 0;
  std::vector<std::function<ncclResult_t()>> sends, others;
};
thread_local PendingGroup pending;

ncclResult_t fail(ncclResult_t result, const std::string &detail) {
  lastDetail = detail;
  return result;
}

/// The ober type of NCCL's `type` (false for types the transport never
/// uses).
bool dtypeOf(ncclDataType_t type, DType &out) {
  switch (type) {
  case ncclInt8:
    out = DType::I8;
    return true;
  case ncclUint8:
    out = DType::U8;
    return true;
  case ncclInt32:
    out = DType::I32;
    return true;
  case ncclInt64:
    out = DType::I64;
    return true;
  case ncclFloat16:
    out = DType::F16;
    return true;
  case ncclBfloat16:
    out = DType::BF16;
    return true;
  case ncclFloat32:
    out = DType::F32;
    return true;
  case ncclFloat64:
    out = DType::F64;
    return true;
  default:
    return false;
  }
}

bool reductionOf(ncclRedOp_t op, int &out) {
  switch (op) {
  case ncclSum:
    out = OBER_REDUCE_SUM;
    return true;
  case ncclProd:
    out = OBER_REDUCE_PRODUCT;
    return true;
  case ncclMax:
    out = OBER_REDUCE_MAX;
    return true;
  case ncclMin:
    out = OBER_REDUCE_MIN;
    return true;
  default:
    return false;
  }
}

class LoopbackNccl final : public NcclApi {
public:
  explicit LoopbackNccl(double timeoutSeconds)
      : timeout(std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(timeoutSeconds))) {}

  ncclResult_t getUniqueId(ncclUniqueId *id) override {
    std::lock_guard<std::mutex> lock(mutex);
    *id = ncclUniqueId{};
    const LoopbackNccl *self = this;
    uint64_t key = ++nextKey;
    std::memcpy(id->internal, kMagic, sizeof(kMagic));
    std::memcpy(id->internal + sizeof(kMagic), &self, sizeof(self));
    std::memcpy(id->internal + sizeof(kMagic) + sizeof(self), &key,
                sizeof(key));
    return ncclSuccess;
  }

  ncclResult_t commInitRank(ncclComm_t *comm, int ranks, ncclUniqueId id,
                            int rank) override {
    const LoopbackNccl *owner = nullptr;
    uint64_t key = 0;
    std::memcpy(&owner, id.internal + sizeof(kMagic), sizeof(owner));
    std::memcpy(&key, id.internal + sizeof(kMagic) + sizeof(owner),
                sizeof(key));
    if (std::memcmp(id.internal, kMagic, sizeof(kMagic)) != 0 ||
        owner != this || key == 0)
      return fail(ncclInvalidArgument, "not an id of this loopback");
    if (ranks < 1 || rank < 0 || rank >= ranks)
      return fail(ncclInvalidArgument, "rank " + std::to_string(rank) + " of " +
                                           std::to_string(ranks));
    std::unique_lock<std::mutex> lock(mutex);
    std::shared_ptr<Clique> &forming = initializing[key];
    if (!forming)
      forming = std::make_shared<Clique>(ranks);
    std::shared_ptr<Clique> clique = forming;
    if (clique->size != ranks || clique->joined[rank])
      return fail(ncclInvalidUsage,
                  "rank " + std::to_string(rank) + " of " +
                      std::to_string(ranks) + " joins a communicator of " +
                      std::to_string(clique->size) + " twice or by mistake");
    clique->joined[rank] = true;
    if (++clique->joinedCount == ranks) {
      initializing.erase(key); // an id makes one communicator
      changed.notify_all();
    } else if (!changed.wait_for(lock, timeout, [&] {
                 return clique->joinedCount == ranks || clique->broken;
               })) {
      clique->broken = true;
      changed.notify_all();
      return fail(ncclSystemError, "timed out waiting for the other ranks");
    }
    if (clique->broken)
      return fail(ncclSystemError, "another rank timed out");
    *comm = reinterpret_cast<ncclComm_t>(new Comm{clique, rank});
    return ncclSuccess;
  }

  // A communicator lives as long as the loopback: work still queued on a
  // stream may name it.
  ncclResult_t commDestroy(ncclComm_t comm) override {
    std::lock_guard<std::mutex> lock(mutex);
    retired.emplace_back(&commOf(comm));
    return ncclSuccess;
  }
  /// Also fails the work of every rank of the communicator still waiting.
  ncclResult_t commAbort(ncclComm_t comm) override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      commOf(comm).clique->broken = true;
      changed.notify_all();
    }
    return commDestroy(comm);
  }

  const char *errorString(ncclResult_t result) override {
    static const std::map<ncclResult_t, const char *> names = {
        {ncclSuccess, "no error"},
        {ncclSystemError, "unhandled system error"},
        {ncclInternalError, "internal error"},
        {ncclInvalidArgument, "invalid argument"},
        {ncclInvalidUsage, "invalid usage"}};
    thread_local std::string text; // valid until the thread's next call
    auto found = names.find(result);
    text =
        std::string(found == names.end() ? "unknown result" : found->second) +
        " (loopback NCCL: " + lastDetail + ")";
    return text.c_str();
  }

  ncclResult_t allReduce(const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                         CUstream stream) override {
    return runAfter(stream, [=] {
      return reduce(in, out, count, type, op, comm, false);
    });
  }
  ncclResult_t reduceScatter(const void *in, void *out, size_t count,
                             ncclDataType_t type, ncclRedOp_t op,
                             ncclComm_t comm, CUstream stream) override {
    return runAfter(stream, [=] {
      return reduce(in, out, count, type, op, comm, true);
    });
  }
  ncclResult_t allGather(const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclComm_t comm,
                         CUstream stream) override {
    return runAfter(stream, [=] {
      return exchange(in, out, count, type, comm, "all-gather", -1);
    });
  }
  ncclResult_t broadcast(const void *in, void *out, size_t count,
                         ncclDataType_t type, int root, ncclComm_t comm,
                         CUstream stream) override {
    return runAfter(stream, [=] {
      return exchange(in, out, count, type, comm, "broadcast", root);
    });
  }

  ncclResult_t send(const void *data, size_t count, ncclDataType_t type,
                    int peer, ncclComm_t comm, CUstream stream) override {
    size_t bytes = 0;
    if (ncclResult_t r = pointToPoint(count, type, peer, comm, bytes))
      return r;
    if (pending.depth > 0) {
      // A group's sends are posted first at its end, and never wait.
      const char *from = static_cast<const char *>(data);
      auto message = std::make_shared<std::vector<char>>(from, from + bytes);
      pending.sends.push_back([=] {
        post(comm, peer, std::move(*message));
        return ncclSuccess;
      });
      return ncclSuccess;
    }
    return onStream(stream, [=]() -> std::string {
      const char *from = static_cast<const char *>(data);
      uint64_t number = post(comm, peer, std::vector<char>(from, from + bytes));
      Comm &c = commOf(comm);
      std::unique_lock<std::mutex> lock(mutex);
      if (!changed.wait_for(lock, timeout, [&] {
            return c.clique->received[{c.rank, peer}] >= number ||
                   c.clique->broken;
          }))
        return "its peer (rank " + std::to_string(peer) +
               " of the communicator) did not receive a send in time";
      return c.clique->broken ? "the communicator was aborted" : "";
    });
  }

  ncclResult_t recv(void *data, size_t count, ncclDataType_t type, int peer,
                    ncclComm_t comm, CUstream stream) override {
    size_t bytes = 0;
    if (ncclResult_t r = pointToPoint(count, type, peer, comm, bytes))
      return r;
    auto receive = [=]() -> std::string {
      Comm &c = commOf(comm);
      std::unique_lock<std::mutex> lock(mutex);
      auto &queue = c.clique->mail[{peer, c.rank}];
      if (!changed.wait_for(lock, timeout, [&] {
            return !queue.empty() || c.clique->broken;
          }))
        return "no message from rank " + std::to_string(peer) + " in time";
      if (queue.empty())
        return "the communicator was aborted";
      std::vector<char> message = std::move(queue.front());
      queue.pop_front();
      ++c.clique->received[{peer, c.rank}];
      changed.notify_all();
      if (message.size() != bytes)
        return "received " + std::to_string(message.size()) +
               " bytes, expected " + std::to_string(bytes);
      std::memcpy(data, message.data(), message.size());
      return "";
    };
    if (pending.depth > 0)
      return run([=] {
        std::string error = receive();
        return error.empty() ? ncclSuccess : fail(ncclInvalidUsage, error);
      });
    return onStream(stream, receive);
  }

  ncclResult_t groupStart() override {
    ++pending.depth;
    return ncclSuccess;
  }
  /// Runs the group's sends first (they never block), then the rest in
  /// order: NCCL's fused group has no order among its calls.
  ncclResult_t groupEnd() override {
    if (pending.depth == 0)
      return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--pending.depth > 0)
      return ncclSuccess;
    PendingGroup group = std::move(pending);
    pending = PendingGroup();
    ncclResult_t result = ncclSuccess;
    for (auto *calls : {&group.sends, &group.others})
      for (auto &call : *calls)
        if (ncclResult_t r = call(); result == ncclSuccess)
          result = r;
    return result;
  }

  void useDevice(int) override {}
  std::shared_ptr<CUstream_st> createStream() override {
    auto *stream = new LoopStream();
    return std::shared_ptr<CUstream_st>(
        reinterpret_cast<CUstream_st *>(stream),
        [](CUstream_st *s) { delete streamOf(s); });
  }
  void synchronize(CUstream stream) override {
    if (LoopStream *s = streamOf(stream))
      s->synchronize();
  }
  StreamState query(CUstream stream) override {
    LoopStream *s = streamOf(stream);
    return s ? s->state() : StreamState::Idle;
  }
  void waitFor(CUstream, const Event &) override {}
  void record(Event &, CUstream) override {}
  void *allocate(int device, size_t bytes, CUstream stream) override {
    void *memory = std::malloc(bytes ? bytes : 1);
    useOn(device, memory, stream);
    return memory;
  }
  void useOn(int, void *memory, CUstream stream) override {
    if (LoopStream *s = streamOf(stream)) {
      std::lock_guard<std::mutex> lock(mutex);
      users[memory].push_back(s);
    }
  }
  /// Freed once the streams it was allocated and used on pass this point,
  /// as the caching allocator does.
  void release(int, void *memory) override {
    std::vector<LoopStream *> streams;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto found = users.find(memory);
      if (found != users.end()) {
        streams = std::move(found->second);
        users.erase(found);
      }
    }
    if (streams.empty())
      return std::free(memory);
    auto left = std::make_shared<std::atomic<size_t>>(streams.size());
    for (LoopStream *s : streams)
      s->push([=] {
        if (--*left == 0)
          std::free(memory);
        return std::string();
      });
  }
  void copy(void *to, const void *from, size_t bytes,
            CUstream stream) override {
    onStream(stream, [=] {
      std::memcpy(to, from, bytes);
      return std::string();
    });
  }
  void copyRows(void *to, size_t toPitch, const void *from, size_t fromPitch,
                size_t width, size_t rows, CUstream stream) override {
    onStream(stream, [=] {
      copyHostRows(to, static_cast<int64_t>(toPitch), from,
                   static_cast<int64_t>(fromPitch), static_cast<int64_t>(width),
                   static_cast<int64_t>(rows));
      return std::string();
    });
  }
  void copyToHost(void *host, const void *from, size_t bytes,
                  CUstream stream) override {
    copy(host, from, bytes, stream);
  }
  void fill32(void *to, uint32_t value, size_t count,
              CUstream stream) override {
    onStream(stream, [=] {
      for (size_t i = 0; i < count; ++i)
        std::memcpy(static_cast<char *>(to) + 4 * i, &value, 4);
      return std::string();
    });
  }
  void follow(CUstream waiter, CUstream stream) override {
    LoopStream *s = streamOf(stream);
    if (!s)
      return;
    uint64_t mark = s->mark();
    onStream(waiter, [=] {
      return s->waitUntil(mark, timeout)
                 ? std::string()
                 : std::string("a stream it follows did not finish in time");
    });
  }
  std::shared_ptr<Event> markProgram() override { return nullptr; }
  void retireStream(int, CUstream) override {}

private:
  /// Runs `call` now, or at ncclGroupEnd inside a group.
  ncclResult_t run(std::function<ncclResult_t()> call) {
    if (pending.depth == 0)
      return call();
    pending.others.push_back(std::move(call));
    return ncclSuccess;
  }

  /// Checks a send's or receive's arguments; `bytes` gets its size.
  ncclResult_t pointToPoint(size_t count, ncclDataType_t type, int peer,
                            ncclComm_t comm, size_t &bytes) {
    DType t;
    if (!dtypeOf(type, t))
      return fail(ncclInvalidArgument, "unsupported type");
    if (peer < 0 || peer >= commOf(comm).clique->size)
      return fail(ncclInvalidArgument, "no peer " + std::to_string(peer));
    bytes = count * dtypeSize(t);
    return ncclSuccess;
  }

  /// Runs `call` (a collective) once the work queued on `stream` is done.
  ncclResult_t runAfter(CUstream stream, std::function<ncclResult_t()> call) {
    if (LoopStream *s = streamOf(stream); s && pending.depth == 0) {
      try {
        s->synchronize();
      } catch (const CommError &e) {
        return fail(ncclSystemError, e.what());
      }
    }
    return run(std::move(call));
  }

  /// Queues `work` on `stream` (or runs it now on the null stream, where
  /// a failure is the call's result).
  ncclResult_t onStream(CUstream stream, std::function<std::string()> work) {
    if (LoopStream *s = streamOf(stream)) {
      s->push(std::move(work));
      return ncclSuccess;
    }
    std::string error = work();
    return error.empty() ? ncclSuccess : fail(ncclSystemError, error);
  }

  /// Leaves `message` for `peer`; returns its number among the messages
  /// from this rank to `peer` (1 for the first).
  uint64_t post(ncclComm_t comm, int peer, std::vector<char> message) {
    Comm &c = commOf(comm);
    std::lock_guard<std::mutex> lock(mutex);
    c.clique->mail[{c.rank, peer}].push_back(std::move(message));
    changed.notify_all();
    return ++c.clique->sent[{c.rank, peer}];
  }

  /// Waits for every rank of `comm` to arrive with `mine`; `parts` gets
  /// their buffers in rank order. Ranks whose `signature`s differ get
  /// ncclInvalidUsage.
  ncclResult_t meet(ncclComm_t comm, const void *mine,
                    const std::string &signature,
                    std::vector<const void *> &parts) {
    Comm &c = commOf(comm);
    Clique &k = *c.clique;
    std::unique_lock<std::mutex> lock(mutex);
    if (k.broken)
      return fail(ncclSystemError, "a rank timed out earlier");
    k.parts[c.rank] = mine;
    k.signatures[c.rank] = signature;
    uint64_t round = k.round;
    if (++k.arrived == k.size) {
      // Published for this round; replaced only once every rank has
      // arrived at the next, so after all have read it.
      k.met = k.parts;
      k.agreed = true;
      for (const std::string &s : k.signatures)
        k.agreed = k.agreed && s == k.signatures[0];
      k.arrived = 0;
      ++k.round;
      changed.notify_all();
    } else if (!changed.wait_for(
                   lock, timeout,
                   [&] { return k.round != round || k.broken; }) ||
               k.broken) {
      k.broken = true;
      changed.notify_all();
      return fail(ncclSystemError, "timed out in " + signature);
    }
    parts = k.met;
    if (!k.agreed)
      return fail(ncclInvalidUsage, "ranks disagree: " + signature + " vs " +
                                        k.signatures[(c.rank + 1) % k.size]);
    return ncclSuccess;
  }

  /// Computes into a buffer of its own, and writes `out` only after every
  /// rank has read the inputs: NCCL allows out == in.
  ncclResult_t finish(ncclComm_t comm, const std::string &signature,
                      const std::vector<char> &result, void *out) {
    std::vector<const void *> ignored;
    if (ncclResult_t r = meet(comm, nullptr, signature + " (done)", ignored))
      return r;
    if (!result.empty())
      std::memcpy(out, result.data(), result.size());
    return ncclSuccess;
  }

  ncclResult_t reduce(const void *in, void *out, size_t count,
                      ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                      bool scatter) {
    DType t;
    int reduction;
    if (!dtypeOf(type, t) || !reductionOf(op, reduction))
      return fail(ncclInvalidArgument, "unsupported type or operation");
    std::string signature =
        std::string(scatter ? "reduce-scatter" : "all-reduce") + " of " +
        std::to_string(count) + " " + dtypeName(t) + " op " +
        std::to_string(op);
    std::vector<const void *> parts;
    if (ncclResult_t r = meet(comm, in, signature, parts))
      return r;
    size_t bytes = count * dtypeSize(t);
    size_t at = scatter ? commOf(comm).rank * bytes : 0;
    std::vector<char> result(bytes);
    for (size_t m = 0; m < parts.size(); ++m) {
      const char *part = static_cast<const char *>(parts[m]) + at;
      if (m == 0)
        std::memcpy(result.data(), part, bytes);
      else
        reduceInto(t, reduction, result.data(), part,
                   static_cast<int64_t>(count));
    }
    return finish(comm, signature, result, out);
  }

  /// All-gather (`root` < 0) or broadcast from `root`.
  ncclResult_t exchange(const void *in, void *out, size_t count,
                        ncclDataType_t type, ncclComm_t comm, const char *kind,
                        int root) {
    DType t;
    if (!dtypeOf(type, t))
      return fail(ncclInvalidArgument, "unsupported type");
    int size = commOf(comm).clique->size;
    if (root >= size)
      return fail(ncclInvalidArgument, "no root " + std::to_string(root));
    std::string signature = std::string(kind) + " of " + std::to_string(count) +
                            " " + dtypeName(t) + " root " +
                            std::to_string(root);
    std::vector<const void *> parts;
    if (ncclResult_t r = meet(comm, in, signature, parts))
      return r;
    size_t bytes = count * dtypeSize(t);
    std::vector<char> result;
    for (int m = 0; m < size; ++m)
      if (root < 0 || m == root) {
        const char *part = static_cast<const char *>(parts[m]);
        result.insert(result.end(), part, part + bytes);
      }
    return finish(comm, signature, result, out);
  }

  std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable changed;
  uint64_t nextKey = 0;
  /// Communicators some ranks have joined, by id.
  std::map<uint64_t, std::shared_ptr<Clique>> initializing;
  /// The streams each block of memory was allocated or used on.
  std::map<void *, std::vector<LoopStream *>> users;
  /// Communicators destroyed or aborted.
  std::vector<std::unique_ptr<Comm>> retired;
};

} // namespace

std::unique_ptr<NcclApi> ober::rt::cuda::loopbackNccl(double timeoutSeconds) {
  return std::make_unique<LoopbackNccl>(timeoutSeconds);
}
