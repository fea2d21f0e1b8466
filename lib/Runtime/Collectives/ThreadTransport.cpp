//===- ThreadTransport.cpp - ranks as threads of one process --------------===//
//
// Part of Ober-Train's runtime (no MLIR). The members of a group meet at a
// barrier, read each other's buffers in place, and meet again before any
// returns (so no buffer changes while another member reads it). Sends are
// copied into a mailbox. Every wait gives up after the hub's timeout, and
// all of them once a rank has failed.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Comm.h"

#include <chrono>
#include <cstring>
#include <map>
#include <tuple>

using namespace ober::rt;

namespace ober::rt {
class ThreadHub {
public:
  ThreadHub(int64_t size, double timeout) : size(size), timeout(timeout) {}

  struct Meeting {
    int64_t arrived = 0, generation = 0;
    std::vector<const void *> buffers, complete;
  };

  /// Waits until every member of `members` has arrived with its buffer;
  /// returns the members' buffers (valid until the next meet).
  std::vector<const void *> meet(const std::vector<int64_t> &members,
                                 int64_t index, const void *buffer) {
    std::unique_lock<std::mutex> lock(mutex);
    Meeting &m = meetings[members];
    m.buffers.resize(members.size());
    m.buffers[index] = buffer;
    int64_t mine = m.generation;
    if (++m.arrived == static_cast<int64_t>(members.size())) {
      // The next meeting of the group cannot complete before every member
      // has left this one, so `complete` holds until each has read it.
      m.arrived = 0;
      ++m.generation;
      m.complete = m.buffers;
      changed.notify_all();
      return m.complete;
    }
    await(
        lock, [&] { return m.generation != mine; }, members);
    return m.complete;
  }

  void post(int64_t from, int64_t to, int64_t tag, const void *data,
            int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure.empty())
      throw CommError(failure);
    const char *p = static_cast<const char *>(data);
    mailbox[{from, to, tag}].emplace_back(p, p + bytes);
    changed.notify_all();
  }

  void take(int64_t from, int64_t to, int64_t tag, void *data, int64_t bytes) {
    std::unique_lock<std::mutex> lock(mutex);
    auto key = std::make_tuple(from, to, tag);
    await(lock,
          [&] {
            auto it = mailbox.find(key);
            return it != mailbox.end() && !it->second.empty();
          },
          {from});
    std::deque<std::vector<char>> &queue = mailbox[key];
    if (static_cast<int64_t>(queue.front().size()) != bytes)
      throw CommError("rank " + std::to_string(from) + " sent " +
                      std::to_string(queue.front().size()) + " bytes, rank " +
                      std::to_string(to) + " expected " +
                      std::to_string(bytes));
    std::memcpy(data, queue.front().data(), bytes);
    queue.pop_front();
  }

  void fail(const std::string &why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.empty())
      failure = why;
    changed.notify_all();
  }

  const int64_t size;

private:
  template <typename Ready>
  void await(std::unique_lock<std::mutex> &lock, Ready ready,
             const std::vector<int64_t> &peers) {
    auto limit = std::chrono::duration<double>(timeout);
    bool ok = changed.wait_for(lock, limit,
                               [&] { return ready() || !failure.empty(); });
    if (!failure.empty())
      throw CommError(failure);
    if (!ok) {
      std::string who;
      for (int64_t p : peers)
        who += (who.empty() ? "" : ", ") + std::to_string(p);
      throw CommError("no progress in " + std::to_string(int(timeout)) +
                      " s waiting for rank(s) " + who);
    }
  }

  const double timeout;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::vector<int64_t>, Meeting> meetings;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::deque<std::vector<char>>>
      mailbox;
  std::string failure;
};
} // namespace ober::rt

namespace {
class ThreadTransport final : public Transport {
public:
  ThreadTransport(std::shared_ptr<ThreadHub> hub, int64_t rank)
      : hub(std::move(hub)), self(rank) {}

  int64_t rank() const override { return self; }
  int64_t size() const override { return hub->size; }

  void createGroups(const std::vector<GroupSpec> &specs) override {
    groups.clear();
    for (const GroupSpec &g : specs) {
      int64_t index = 0;
      while (g.members[index] != self)
        ++index;
      groups.push_back({g.members, index});
    }
  }

  void allReduce(size_t g, const void *in, void *out, int64_t count, DType type,
                 int reduction) override {
    std::vector<const void *> parts = meet(g, in);
    std::memcpy(out, parts[0], count * dtypeSize(type));
    for (size_t m = 1; m < parts.size(); ++m)
      reduceInto(type, reduction, out, parts[m], count);
    meet(g, nullptr);
  }

  void allGather(size_t g, const void *in, void *out, int64_t bytes) override {
    std::vector<const void *> parts = meet(g, in);
    for (size_t m = 0; m < parts.size(); ++m)
      std::memcpy(static_cast<char *>(out) + m * bytes, parts[m], bytes);
    meet(g, nullptr);
  }

  void reduceScatter(size_t g, const void *in, void *out, int64_t count,
                     DType type, int reduction) override {
    std::vector<const void *> parts = meet(g, in);
    int64_t bytes = count * static_cast<int64_t>(dtypeSize(type));
    int64_t at = groups[g].index * bytes;
    std::memcpy(out, static_cast<const char *>(parts[0]) + at, bytes);
    for (size_t m = 1; m < parts.size(); ++m)
      reduceInto(type, reduction, out, static_cast<const char *>(parts[m]) + at,
                 count);
    meet(g, nullptr);
  }

  void allToAll(size_t g, const void *in, void *out, int64_t bytes) override {
    std::vector<const void *> parts = meet(g, in);
    int64_t at = groups[g].index * bytes;
    for (size_t m = 0; m < parts.size(); ++m)
      std::memcpy(static_cast<char *>(out) + m * bytes,
                  static_cast<const char *>(parts[m]) + at, bytes);
    meet(g, nullptr);
  }

  void broadcast(size_t g, void *data, int64_t bytes, int64_t root) override {
    std::vector<const void *> parts = meet(g, data);
    if (groups[g].index != root)
      std::memcpy(data, parts[root], bytes);
    meet(g, nullptr);
  }

  void send(int64_t to, int64_t tag, const void *data, int64_t bytes) override {
    hub->post(self, to, tag, data, bytes);
  }
  void recv(int64_t from, int64_t tag, void *data, int64_t bytes) override {
    hub->take(from, self, tag, data, bytes);
  }

private:
  std::vector<const void *> meet(size_t g, const void *buffer) {
    return hub->meet(groups.at(g).members, groups[g].index, buffer);
  }

  struct Group {
    std::vector<int64_t> members;
    int64_t index;
  };
  std::shared_ptr<ThreadHub> hub;
  int64_t self;
  std::vector<Group> groups;
};
} // namespace

std::shared_ptr<ThreadHub> ober::rt::makeThreadHub(int64_t size,
                                                   double timeoutSeconds) {
  return std::make_shared<ThreadHub>(size, timeoutSeconds);
}

std::unique_ptr<Transport>
ober::rt::threadTransport(std::shared_ptr<ThreadHub> hub, int64_t rank) {
  return std::make_unique<ThreadTransport>(std::move(hub), rank);
}

void ober::rt::failThreadHub(ThreadHub &hub, const std::string &why) {
  hub.fail(why);
}
