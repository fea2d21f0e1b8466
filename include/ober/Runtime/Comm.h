//===- Comm.h - communication among the ranks of a job ----------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). A Transport moves bytes among the
// ranks of one job, blocking (backends: MPI between processes, shared
// memory between the threads of one process). A Channel gives one rank
// asynchronous collectives on top: start queues an operation on the
// rank's communication thread, which runs them in order; wait blocks until
// one is done. Generated code reaches the channel of the rank running it
// through ober/Runtime/Collectives.h.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_COMM_H
#define OBER_RUNTIME_COMM_H

#include "ober/Runtime/Collectives.h"
#include "ober/Runtime/DType.h"
#include "ober/Runtime/Grid.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ober::rt {

/// A failed or abandoned communication (a lost peer, a timeout).
struct CommError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One group of ranks a transport communicates within.
struct GroupSpec {
  /// The members' world ranks, in order.
  std::vector<int64_t> members;
  /// Equal for the members of one group, distinct among the groups made
  /// in the same call.
  int64_t color = 0;
};

class Transport {
public:
  virtual ~Transport();
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// Makes the communicators of `groups` (this rank's group of each kind);
  /// every rank calls it once, with as many groups in the same order.
  virtual void createGroups(const std::vector<GroupSpec> &groups) = 0;

  // Blocking operations within group `g` (an index into createGroups'
  // list), every member calling them in the same order. Counts are
  // elements, sizes bytes; outputs never alias inputs.

  /// out = reduction over the members of in (`count` elements).
  virtual void allReduce(size_t g, const void *in, void *out, int64_t count,
                         DType type, int reduction) = 0;
  /// out = the members' `bytes` each, in member order.
  virtual void allGather(size_t g, const void *in, void *out,
                         int64_t bytes) = 0;
  /// out = this member's block (`count` elements) of the reduction of the
  /// members' in (one block per member, in order).
  virtual void reduceScatter(size_t g, const void *in, void *out, int64_t count,
                             DType type, int reduction) = 0;
  /// Block m of in (`bytes` each) goes to member m; out holds the blocks
  /// received, in member order.
  virtual void allToAll(size_t g, const void *in, void *out, int64_t bytes) = 0;
  /// data = member `root`'s data.
  virtual void broadcast(size_t g, void *data, int64_t bytes, int64_t root) = 0;
  /// Sends to world rank `to`; returns at once (the data is copied).
  /// Messages between two ranks with one tag arrive in the order sent.
  virtual void send(int64_t to, int64_t tag, const void *data,
                    int64_t bytes) = 0;
  virtual void recv(int64_t from, int64_t tag, void *data, int64_t bytes) = 0;

  // The memory the operations' buffers are in (the host's by default;
  // NcclTransport's are device memory). The channel rearranges blocks
  // through these.

  /// Copies `rows` rows of `width` bytes from `src` (each `srcPitch` bytes
  /// after the last) to `dst` (each `dstPitch` bytes after the last); done
  /// when it returns.
  virtual void copyRows(void *dst, int64_t dstPitch, const void *src,
                        int64_t srcPitch, int64_t width, int64_t rows);
  /// `bytes` of scratch memory, freed with the last reference.
  virtual std::shared_ptr<char> scratch(int64_t bytes);
  /// Called on the thread that starts an operation on buffers it computed:
  /// what the channel's thread runs before the operation so that it sees
  /// them (a device transport waits for the caller's queued kernels).
  /// Null where the buffers are ready once the call is made (host memory).
  virtual std::function<void()> readyMarker() { return nullptr; }
};

/// Copies `rows` rows of `width` bytes of host memory from `src` (each
/// `srcPitch` bytes after the last) to `dst` (each `dstPitch` after).
void copyHostRows(void *dst, int64_t dstPitch, const void *src,
                  int64_t srcPitch, int64_t width, int64_t rows);

/// What statistics and the planner's report count of a collective: its
/// name ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
/// "send/recv"; empty for what moves nothing or is counted at the other
/// end: all-slice, recv) and its bytes for a group of `members` whose
/// input is `inputBytes` (the full buffer each member contributes; the
/// whole result of an all-gather and an all-to-all).
struct Traffic {
  const char *kind;
  int64_t bytes;
};
Traffic trafficOf(int64_t kind, int64_t inputBytes, int64_t members);

/// Reduces `count` elements of `x` into `acc` (acc = acc op x).
void reduceInto(DType type, int reduction, void *acc, const void *x,
                int64_t count);

/// A collective as a descriptor describes it (ober/Runtime/Collectives.h).
struct CollectiveDesc {
  int64_t kind = OBER_COLL_ALL_REDUCE, reduction = OBER_REDUCE_SUM;
  DType dtype = DType::F32;
  int64_t axis = 0, concatAxis = 0, tag = 0, group = 0;
  std::vector<int64_t> shape, gridAxes, peer;

  /// Parses `n` fields; throws CommError on a malformed one.
  static CollectiveDesc parse(const int64_t *fields, int64_t n);
  /// The fields (the compiler writes these).
  std::vector<int64_t> fields() const;
  /// The result's shape for a group of `members`.
  std::vector<int64_t> resultShape(int64_t members) const;
  /// "all-reduce", "send", ...
  const char *kindName() const;
};

/// The asynchronous collectives of one rank.
class Channel {
public:
  /// `groups`: the grid axes of each group kind the program uses (the
  /// index is a descriptor's OBER_COLL_GROUP). Makes the communicators
  /// (collective over the transport's ranks) and starts the thread.
  Channel(Transport &transport, Grid grid, int64_t rank,
          const std::vector<std::vector<int64_t>> &groups);
  ~Channel();
  Channel(const Channel &) = delete;
  Channel &operator=(const Channel &) = delete;

  /// Queues `desc` on `in` into `out`; returns its handle.
  int64_t start(const CollectiveDesc &desc, const void *in, void *out);
  /// Blocks until `handle` is done; throws CommError if it failed.
  void wait(int64_t handle);
  /// start + wait.
  void run(const CollectiveDesc &desc, const void *in, void *out);

  int64_t rank() const { return self; }
  const Grid &grid() const { return layout; }
  /// Seconds since a started operation last finished while another was
  /// waiting to (0 when none is pending); for a watchdog.
  double stalledSeconds() const;
  /// The oldest pending operation, for a message ("all-reduce over grid
  /// axes [0] (group of ranks 0, 2)").
  std::string pendingDescription() const;
  /// Counts `desc` in the program's traffic (trafficOf).
  void count(const CollectiveDesc &desc);
  /// The program's traffic so far: bytes by kind.
  std::vector<std::pair<std::string, int64_t>> traffic() const;

private:
  struct Task {
    int64_t id;
    CollectiveDesc desc;
    const void *in;
    void *out;
    /// The transport's readyMarker at start (may be null).
    std::function<void()> ready;
  };
  /// Copies [parts][outer][inner] (`srcPartsMajor`) to [outer][parts]
  /// [inner] or back through the transport; `inner` in bytes.
  void regroup(const char *src, char *dst, int64_t outer, int64_t parts,
               int64_t inner, bool srcPartsMajor);
  void loop();
  void execute(const Task &task);
  std::string describe(const CollectiveDesc &desc) const;

  Transport &transport;
  Grid layout;
  int64_t self;
  std::vector<std::vector<int64_t>> groupAxes;
  std::vector<std::vector<int64_t>> groupMembers;
  std::vector<std::pair<std::string, int64_t>> bytesByKind;

  mutable std::mutex mutex;
  std::condition_variable changed;
  std::deque<Task> queue;
  int64_t nextId = 1, doneThrough = 0;
  std::string failure;
  bool stopping = false;
  double lastProgress = 0;
  std::thread worker;
};

/// The channel generated code on this thread uses (set by whoever runs a
/// rank's program on it; null: none).
void setCurrentChannel(Channel *channel);
Channel *currentChannel();

/// Called when a collective started by generated code fails: prints the
/// error and ends the job (set by the executable; default: exit(1)).
using FatalHandler = void (*)(const std::string &message);
void setFatalHandler(FatalHandler handler);

/// In-process ranks: `size` transports, one per thread, meeting in shared
/// memory. A blocked operation gives up after `timeoutSeconds`, and every
/// rank's operations fail once one rank calls fail().
class ThreadHub;
std::shared_ptr<ThreadHub> makeThreadHub(int64_t size, double timeoutSeconds);
std::unique_ptr<Transport> threadTransport(std::shared_ptr<ThreadHub> hub,
                                           int64_t rank);
/// Makes every pending and later operation on `hub` fail with `why`.
void failThreadHub(ThreadHub &hub, const std::string &why);

} // namespace ober::rt

#endif // OBER_RUNTIME_COMM_H
