//===- Channel.cpp - one rank's asynchronous collectives ------------------===//
//
// Part of Ober-Train's runtime (no MLIR). The channel's thread takes the
// operations in the order they were started and runs each on the
// transport, rearranging blocks where the axis a collective works along is
// not the outermost (transports move whole per-member blocks).
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Comm.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace ober::rt;

Transport::~Transport() = default;

void ober::rt::copyHostRows(void *dst, int64_t dstPitch, const void *src,
                            int64_t srcPitch, int64_t width, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char *>(dst) + r * dstPitch,
                static_cast<const char *>(src) + r * srcPitch, width);
}

void Transport::copyRows(void *dst, int64_t dstPitch, const void *src,
                         int64_t srcPitch, int64_t width, int64_t rows) {
  copyHostRows(dst, dstPitch, src, srcPitch, width, rows);
}

std::shared_ptr<char> Transport::scratch(int64_t bytes) {
  return std::shared_ptr<char>(new char[std::max<int64_t>(bytes, 1)],
                               std::default_delete<char[]>());
}

namespace {
double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t product(const std::vector<int64_t> &v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < v.size(); ++i)
    p *= v[i];
  return p;
}

/// A tensor of `shape` split along `axis` into `parts` blocks, as
/// [outer][parts][inner bytes].
struct Blocks {
  int64_t outer, parts, inner;
  Blocks(const std::vector<int64_t> &shape, int64_t axis, int64_t parts,
         size_t elementBytes)
      : outer(product(shape, 0, axis)), parts(parts),
        inner(shape[axis] / parts * product(shape, axis + 1, shape.size()) *
              static_cast<int64_t>(elementBytes)) {}
  int64_t bytesPerPart() const { return outer * inner; }
};

thread_local Channel *current = nullptr;

void defaultFatal(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}
FatalHandler fatalHandler = defaultFatal;
} // namespace

void ober::rt::setCurrentChannel(Channel *channel) { current = channel; }
Channel *ober::rt::currentChannel() { return current; }
void ober::rt::setFatalHandler(FatalHandler handler) {
  fatalHandler = handler ? handler : defaultFatal;
}

Channel::Channel(Transport &transport, Grid grid, int64_t rank,
                 const std::vector<std::vector<int64_t>> &groups)
    : transport(transport), layout(std::move(grid)), self(rank),
      groupAxes(groups) {
  std::vector<GroupSpec> specs;
  for (const std::vector<int64_t> &axes : groupAxes) {
    for (int64_t a : axes)
      if (a < 0 || a >= static_cast<int64_t>(layout.shape().size()))
        throw CommError("a group names grid axis " + std::to_string(a) +
                        " of a rank-" + std::to_string(layout.shape().size()) +
                        " grid");
    groupMembers.push_back(layout.group(self, axes));
    specs.push_back({groupMembers.back(), layout.groupIndex(self, axes)});
  }
  transport.createGroups(specs);
  lastProgress = now();
  worker = std::thread([this] { loop(); });
}

Channel::~Channel() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  worker.join();
}

int64_t Channel::start(const CollectiveDesc &desc, const void *in, void *out) {
  if (desc.group < 0 || desc.group >= static_cast<int64_t>(groupAxes.size()))
    throw CommError(std::string(desc.kindName()) + " names group " +
                    std::to_string(desc.group) + " of " +
                    std::to_string(groupAxes.size()));
  // On the caller's thread: the point its own work (a device's queued
  // kernels) has reached.
  std::function<void()> ready = transport.readyMarker();
  std::lock_guard<std::mutex> lock(mutex);
  if (queue.empty())
    lastProgress = now();
  queue.push_back({nextId, desc, in, out, std::move(ready)});
  changed.notify_all();
  return nextId++;
}

void Channel::wait(int64_t handle) {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return doneThrough >= handle || !failure.empty(); });
  if (!failure.empty())
    throw CommError(failure);
}

void Channel::run(const CollectiveDesc &desc, const void *in, void *out) {
  wait(start(desc, in, out));
}

double Channel::stalledSeconds() const {
  std::lock_guard<std::mutex> lock(mutex);
  return queue.empty() ? 0 : now() - lastProgress;
}

std::string Channel::pendingDescription() const {
  std::lock_guard<std::mutex> lock(mutex);
  return queue.empty() ? "nothing" : describe(queue.front().desc);
}

void Channel::count(const CollectiveDesc &desc) {
  int64_t members =
      desc.group >= 0 && desc.group < static_cast<int64_t>(groupMembers.size())
          ? static_cast<int64_t>(groupMembers[desc.group].size())
          : 1;
  int64_t bytes = product(desc.shape, 0, desc.shape.size()) *
                  static_cast<int64_t>(dtypeSize(desc.dtype));
  Traffic t = trafficOf(desc.kind, bytes, members);
  if (!*t.kind)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &[kind, total] : bytesByKind)
    if (kind == t.kind) {
      total += t.bytes;
      return;
    }
  bytesByKind.emplace_back(t.kind, t.bytes);
}

std::vector<std::pair<std::string, int64_t>> Channel::traffic() const {
  std::lock_guard<std::mutex> lock(mutex);
  return bytesByKind;
}

std::string Channel::describe(const CollectiveDesc &desc) const {
  std::string axes;
  for (int64_t a : desc.gridAxes)
    axes += (axes.empty() ? "" : ", ") + std::to_string(a);
  std::string text =
      std::string(desc.kindName()) + " over grid axes [" + axes + "]";
  if (desc.kind == OBER_COLL_SEND || desc.kind == OBER_COLL_RECV) {
    int64_t peer = layout.moveAlong(self, desc.gridAxes, desc.peer);
    return text + (desc.kind == OBER_COLL_SEND ? " to rank " : " from rank ") +
           std::to_string(peer) + " (tag " + std::to_string(desc.tag) + ")";
  }
  std::string members;
  if (desc.group >= 0 && desc.group < static_cast<int64_t>(groupMembers.size()))
    for (int64_t m : groupMembers[desc.group])
      members += (members.empty() ? "" : ", ") + std::to_string(m);
  return text + " (ranks " + members + ")";
}

void Channel::loop() {
  for (;;) {
    Task task;
    bool failed;
    {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      task = queue.front();
      failed = !failure.empty();
    }
    std::string error;
    if (!failed) {
      try {
        execute(task);
      } catch (const std::exception &e) {
        error = "rank " + std::to_string(self) + ": " + describe(task.desc) +
                ": " + e.what();
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    queue.pop_front();
    doneThrough = task.id;
    lastProgress = now();
    if (!error.empty() && failure.empty())
      failure = error;
    changed.notify_all();
  }
}

void Channel::regroup(const char *src, char *dst, int64_t outer,
                      int64_t parts, int64_t inner, bool srcPartsMajor) {
  // One strided copy per part: its `outer` rows are `inner` bytes apart
  // in the parts-major layout and `parts * inner` in the other.
  for (int64_t p = 0; p < parts; ++p) {
    int64_t major = p * outer * inner, minor = p * inner;
    if (srcPartsMajor)
      transport.copyRows(dst + minor, parts * inner, src + major, inner, inner,
                         outer);
    else
      transport.copyRows(dst + major, inner, src + minor, parts * inner, inner,
                         outer);
  }
}

void Channel::execute(const Task &task) {
  if (task.ready)
    task.ready();
  const CollectiveDesc &d = task.desc;
  size_t esize = dtypeSize(d.dtype);
  int64_t count = product(d.shape, 0, d.shape.size());
  int64_t bytes = count * static_cast<int64_t>(esize);
  const char *in = static_cast<const char *>(task.in);
  char *out = static_cast<char *>(task.out);
  if (d.kind == OBER_COLL_SEND || d.kind == OBER_COLL_RECV) {
    int64_t peer = layout.moveAlong(self, d.gridAxes, d.peer);
    if (d.kind == OBER_COLL_SEND)
      transport.send(peer, d.tag, in, bytes);
    else
      transport.recv(peer, d.tag, out, bytes);
    return;
  }
  const std::vector<int64_t> &members = groupMembers[d.group];
  int64_t n = static_cast<int64_t>(members.size());
  int64_t index = 0;
  while (members[index] != self)
    ++index;
  size_t g = static_cast<size_t>(d.group);
  switch (d.kind) {
  case OBER_COLL_ALL_REDUCE:
    transport.allReduce(g, in, out, count, d.dtype, d.reduction);
    return;
  case OBER_COLL_BROADCAST: {
    std::vector<int64_t> sub(d.gridAxes.size());
    for (size_t i = 0; i < sub.size(); ++i)
      sub[i] = layout.shape()[d.gridAxes[i]];
    int64_t root = Grid(sub).rankAt(d.peer);
    if (out != in)
      transport.copyRows(out, bytes, in, bytes, bytes, 1);
    transport.broadcast(g, out, bytes, root);
    return;
  }
  case OBER_COLL_ALL_GATHER: {
    Blocks b(d.shape, d.axis, 1, esize);
    if (b.outer == 1)
      return transport.allGather(g, in, out, bytes);
    std::shared_ptr<char> all = transport.scratch(bytes * n);
    transport.allGather(g, in, all.get(), bytes);
    regroup(all.get(), out, b.outer, n, b.inner, /*srcPartsMajor=*/true);
    return;
  }
  case OBER_COLL_REDUCE_SCATTER: {
    Blocks b(d.shape, d.axis, n, esize);
    int64_t per = count / n;
    if (b.outer == 1)
      return transport.reduceScatter(g, in, out, per, d.dtype, d.reduction);
    std::shared_ptr<char> packed = transport.scratch(bytes);
    regroup(in, packed.get(), b.outer, n, b.inner, /*srcPartsMajor=*/false);
    transport.reduceScatter(g, packed.get(), out, per, d.dtype, d.reduction);
    return;
  }
  case OBER_COLL_ALL_SLICE: {
    Blocks b(d.shape, d.axis, n, esize);
    transport.copyRows(out, b.inner, in + index * b.inner, n * b.inner,
                       b.inner, b.outer);
    return;
  }
  case OBER_COLL_ALL_TO_ALL: {
    Blocks split(d.shape, d.axis, n, esize);
    std::shared_ptr<char> sendBuf = transport.scratch(bytes),
                          recvBuf = transport.scratch(bytes);
    regroup(in, sendBuf.get(), split.outer, n, split.inner,
            /*srcPartsMajor=*/false);
    transport.allToAll(g, sendBuf.get(), recvBuf.get(), split.bytesPerPart());
    std::vector<int64_t> block = d.shape;
    block[d.axis] /= n;
    Blocks joined(block, d.concatAxis, 1, esize);
    regroup(recvBuf.get(), out, joined.outer, n, joined.inner,
            /*srcPartsMajor=*/true);
    return;
  }
  default:
    throw CommError("unknown collective kind " + std::to_string(d.kind));
  }
}

//===----------------------------------------------------------------------===//
// The C ABI of generated code.
//===----------------------------------------------------------------------===//

namespace {
const char *dataOf(ober_rt_buffer *b, size_t elementBytes) {
  return static_cast<const char *>(b->descriptor->aligned) +
         b->descriptor->offset * static_cast<int64_t>(elementBytes);
}

/// The descriptor's fields: a rank-1 memref of i64 {.., size, stride}.
CollectiveDesc descriptorOf(ober_rt_buffer *desc) {
  const auto *fields =
      reinterpret_cast<const int64_t *>(dataOf(desc, sizeof(int64_t)));
  const auto *sizes = reinterpret_cast<const int64_t *>(desc->descriptor + 1);
  return CollectiveDesc::parse(fields, desc->rank == 1 ? sizes[0] : 0);
}

Channel &channelOrDie() {
  if (!current)
    fatalHandler("a collective ran on a thread that runs no rank");
  return *current;
}

int64_t startFromCode(ober_rt_buffer *desc, ober_rt_buffer *in,
                      ober_rt_buffer *out) {
  Channel &channel = channelOrDie();
  try {
    CollectiveDesc d = descriptorOf(desc);
    size_t esize = dtypeSize(d.dtype);
    channel.count(d);
    return channel.start(d, dataOf(in, esize),
                         const_cast<char *>(dataOf(out, esize)));
  } catch (const std::exception &e) {
    fatalHandler("rank " + std::to_string(channel.rank()) + ": " + e.what());
    return 0;
  }
}

void waitFromCode(int64_t handle) {
  Channel &channel = channelOrDie();
  try {
    channel.wait(handle);
  } catch (const std::exception &e) {
    fatalHandler(e.what());
  }
}
} // namespace

#define OBER_RT_COLL_DEFINE(T)                                                 \
  extern "C" int64_t _mlir_ciface_ober_rt_coll_start_##T(                      \
      ober_rt_buffer *desc, ober_rt_buffer *in, ober_rt_buffer *out) {         \
    return startFromCode(desc, in, out);                                       \
  }                                                                            \
  extern "C" void _mlir_ciface_ober_rt_coll_wait_##T(                          \
      int64_t handle, ober_rt_buffer *, ober_rt_buffer *) {                    \
    waitFromCode(handle);                                                      \
  }
OBER_RT_COLL_TYPES(OBER_RT_COLL_DEFINE)
