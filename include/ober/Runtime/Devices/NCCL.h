//===- NCCL.h - collectives between GPUs through NCCL -----------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). NcclTransport is a Transport
// (ober/Runtime/Comm.h) whose buffers are device memory. It opens libnccl.so.2
// with dlopen when constructed, and makes one NCCL communicator per group.
// NCCL's unique ids travel through a bootstrap transport of host memory (MPI
// or threads), or through files in a directory every rank can read.
//
// Pipeline transfers (send, recv) keep the host transports' meaning: a send
// returns at once, messages with one tag arrive in order, and a receive
// takes the message of its tag whatever was sent before it. NCCL's send
// instead waits on its stream until the peer receives, and NCCL matches in
// the order of calls, so two stages that both send first would wait for
// each other on a shared stream. Each ordered pair of ranks in a pipeline
// group that transfers (Options::pipelineGroup, pipelinePairs) therefore
// has a communicator and a stream of its own, made and connected eagerly
// (in one order on every rank);
// a send queues a header (tag, bytes) and a staged copy of its data there,
// and a receive reads headers in order, keeping the messages of other
// tags until they are asked for.
//
// Collectives run on the transport's own stream. The blocking Transport
// operations wait for it; the enqueue* variants return at once and record
// an Event after the collective, which a compute stream can wait on (so
// gradient reduction overlaps the backward pass), and can themselves wait
// for an event marking their input ready.
//
// The transport reaches NCCL and the driver only through an NcclApi: the
// system's (libnccl.so.2 and the driver) by default, or loopbackNccl(),
// which runs NCCL's calls over host memory among the threads of one
// process, so that the plumbing (ids, communicators per group, argument
// mapping, errors) is tested on machines without a GPU or NCCL.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DEVICES_NCCL_H
#define OBER_RUNTIME_DEVICES_NCCL_H

#include "ober/Runtime/Comm.h"
#include "ober/Runtime/Devices/CUDA.h"

#include <nccl.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ober::rt::cuda {

/// NCCL's element type for reducing or moving elements of `type` (bool as
/// uint8). Throws CommError for int16 and strings, naming the supported
/// types.
ncclDataType_t ncclTypeOf(DType type);
/// NCCL's operation for an ober_rt_coll_reduction over `type`: bool sums
/// and maxima are "or" (ncclMax), products and minima "and" (ncclMin), as
/// reduceInto defines them. Throws CommError for an unknown reduction.
ncclRedOp_t ncclReductionOf(int reduction, DType type);

/// NCCL's version (e.g. 22809); opens the library.
int ncclVersion();

/// What NcclTransport calls: NCCL's functions (NCCL's signatures and
/// results, so the system one only forwards) and the few device operations
/// on the transport's stream. An interface so that tests can put a
/// host-memory NCCL (loopbackNccl) under the real transport code.
class NcclApi {
public:
  virtual ~NcclApi();

  virtual ncclResult_t getUniqueId(ncclUniqueId *id) = 0;
  virtual ncclResult_t commInitRank(ncclComm_t *comm, int ranks,
                                    ncclUniqueId id, int rank) = 0;
  virtual ncclResult_t commDestroy(ncclComm_t comm) = 0;
  /// Frees `comm` without waiting for the operations queued on it (their
  /// kernels return): teardown after a peer failed.
  virtual ncclResult_t commAbort(ncclComm_t comm) = 0;
  virtual const char *errorString(ncclResult_t result) = 0;
  virtual ncclResult_t allReduce(const void *in, void *out, size_t count,
                                 ncclDataType_t type, ncclRedOp_t op,
                                 ncclComm_t comm, CUstream stream) = 0;
  virtual ncclResult_t allGather(const void *in, void *out, size_t count,
                                 ncclDataType_t type, ncclComm_t comm,
                                 CUstream stream) = 0;
  virtual ncclResult_t reduceScatter(const void *in, void *out, size_t count,
                                     ncclDataType_t type, ncclRedOp_t op,
                                     ncclComm_t comm, CUstream stream) = 0;
  virtual ncclResult_t broadcast(const void *in, void *out, size_t count,
                                 ncclDataType_t type, int root, ncclComm_t comm,
                                 CUstream stream) = 0;
  virtual ncclResult_t send(const void *data, size_t count, ncclDataType_t type,
                            int peer, ncclComm_t comm, CUstream stream) = 0;
  virtual ncclResult_t recv(void *data, size_t count, ncclDataType_t type,
                            int peer, ncclComm_t comm, CUstream stream) = 0;
  virtual ncclResult_t groupStart() = 0;
  virtual ncclResult_t groupEnd() = 0;

  // The device side; failures throw (CudaError from the system one).

  /// Makes `device`'s context current on the calling thread.
  virtual void useDevice(int device) = 0;
  /// A new non-blocking stream of the current context, destroyed with the
  /// last reference.
  virtual std::shared_ptr<CUstream_st> createStream() = 0;
  virtual void synchronize(CUstream stream) = 0;
  /// Where the work queued on `stream` is; does not wait.
  enum class StreamState { Busy, Idle, Failed };
  virtual StreamState query(CUstream stream) = 0;
  /// Work queued on `stream` later waits for `ready`.
  virtual void waitFor(CUstream stream, const Event &ready) = 0;
  virtual void record(Event &done, CUstream stream) = 0;
  /// Device memory from `device`'s caching allocator, used on `stream`.
  virtual void *allocate(int device, size_t bytes, CUstream stream) = 0;
  virtual void release(int device, void *memory) = 0;
  virtual void copy(void *to, const void *from, size_t bytes,
                    CUstream stream) = 0;
  /// `rows` rows of `width` bytes, `fromPitch` and `toPitch` apart.
  virtual void copyRows(void *to, size_t toPitch, const void *from,
                        size_t fromPitch, size_t width, size_t rows,
                        CUstream stream) = 0;
  /// Device memory to host memory, queued on `stream`.
  virtual void copyToHost(void *host, const void *from, size_t bytes,
                          CUstream stream) = 0;
  /// Sets `count` 32-bit words at `to` to `value`, queued on `stream`
  /// (without a copy from host memory, which could wait for the stream).
  virtual void fill32(void *to, uint32_t value, size_t count,
                      CUstream stream) = 0;
  /// Work queued on `waiter` later waits for the work queued on `stream`
  /// so far.
  virtual void follow(CUstream waiter, CUstream stream) = 0;
  /// Work queued on `stream` uses `memory` (from allocate on another
  /// stream): release keeps it until that work is done.
  virtual void useOn(int device, void *memory, CUstream stream) = 0;
  /// The point the calling thread's program stream (generated code's
  /// kernels) has reached, for waitFor; null where there is none.
  virtual std::shared_ptr<Event> markProgram() = 0;
  /// `stream` is being destroyed: its cached blocks may serve others.
  virtual void retireStream(int device, CUstream stream) = 0;
};

/// The system's NCCL (opened when first called) and CUDA driver. Throws
/// CommError when NCCL is missing.
NcclApi &systemNccl();

/// An NCCL among the threads of this process over host memory, for tests:
/// every rank's transport uses the same instance. Each stream is a thread
/// running its work in order; collectives first wait for their stream's
/// queued work and complete before returning; a send outside a group
/// waits on its stream until the peer receives it (as NCCL's does), while
/// a group's sends never wait. Events are no-ops (the transport's callers
/// record them only on a GPU); "device" memory comes from malloc, freed
/// once the streams that use it pass the release. Ranks that disagree on an
/// operation's kind, type or count get ncclInvalidUsage; a wait longer
/// than `timeoutSeconds` fails with ncclSystemError.
std::unique_ptr<NcclApi> loopbackNccl(double timeoutSeconds = 60);

class NcclTransport final : public Transport {
public:
  struct Options {
    /// A directory all ranks share (one per job: stale files from another
    /// job would be read): unique ids pass through files there instead
    /// of the bootstrap transport's broadcast.
    std::string idDirectory;
    /// How long a rank waits for an id file, seconds.
    double idTimeoutSeconds = 300;
    /// NCCL and the device; null: systemNccl(). Must outlive the
    /// transport.
    NcclApi *api = nullptr;
    /// A group of the bootstrap transport holding every rank in rank
    /// order, through which the ids travel (one all-gather) without
    /// replacing the bootstrap's groups; -1: createGroups makes the
    /// bootstrap's groups its own.
    int64_t bootstrapWorldGroup = -1;
    /// How long the destructor waits for operations still queued on the
    /// transport's stream, seconds. A peer that failed never joins them
    /// and NCCL has no timeout of its own: past this the communicators are
    /// aborted (with a message) instead of the rank hanging at shutdown.
    double teardownSeconds = 30;
    /// The world ranks of this rank's pipeline group, in stage order and
    /// with this rank: the ranks send and recv reach. Every rank passes a
    /// group of the same size (empty or one rank: no pipeline transfers).
    std::vector<int64_t> pipelineGroup;
    /// The (sender, receiver) places in pipelineGroup that transfers use,
    /// the same on every rank (the program's stage pairs); empty: every
    /// ordered pair.
    std::vector<std::pair<int64_t, int64_t>> pipelinePairs;
  };

  /// `bootstrap` gives the rank and world size and carries the unique ids;
  /// it must outlive this transport, and createGroups replaces its groups.
  /// `device` is this rank's GPU. Throws CommError when NCCL is missing
  /// (and CudaError when the driver is).
  NcclTransport(Transport &bootstrap, int device, Options options);
  NcclTransport(Transport &bootstrap, int device)
      : NcclTransport(bootstrap, device, Options()) {}
  ~NcclTransport() override;

  int64_t rank() const override { return bootstrap.rank(); }
  int64_t size() const override { return bootstrap.size(); }
  /// Makes the communicators (collective over all ranks, like NCCL's init).
  void createGroups(const std::vector<GroupSpec> &groups) override;

  void allReduce(size_t g, const void *in, void *out, int64_t count, DType type,
                 int reduction) override;
  void allGather(size_t g, const void *in, void *out, int64_t bytes) override;
  void reduceScatter(size_t g, const void *in, void *out, int64_t count,
                     DType type, int reduction) override;
  void allToAll(size_t g, const void *in, void *out, int64_t bytes) override;
  void broadcast(size_t g, void *data, int64_t bytes, int64_t root) override;
  /// Copies `data` (with its header) on the transport's stream and
  /// queues it on the pair's stream; returns once copied. `to` and `from`
  /// must be in Options::pipelineGroup.
  void send(int64_t to, int64_t tag, const void *data, int64_t bytes) override;
  void recv(int64_t from, int64_t tag, void *data, int64_t bytes) override;

  // Non-blocking: queued on stream() after `ready` (when given), and
  // `done` recorded after the collective.
  void enqueueAllReduce(size_t g, const void *in, void *out, int64_t count,
                        DType type, int reduction, Event &done,
                        const Event *ready = nullptr);
  void enqueueAllGather(size_t g, const void *in, void *out, int64_t bytes,
                        Event &done, const Event *ready = nullptr);
  void enqueueReduceScatter(size_t g, const void *in, void *out, int64_t count,
                            DType type, int reduction, Event &done,
                            const Event *ready = nullptr);
  void enqueueAllToAll(size_t g, const void *in, void *out, int64_t bytes,
                       Event &done, const Event *ready = nullptr);
  void enqueueBroadcast(size_t g, void *data, int64_t bytes, int64_t root,
                        Event &done, const Event *ready = nullptr);

  // Device memory: the channel's rearranging copies run on stream()
  // (done on return), its scratch comes from the device's allocator, and
  // an operation started by generated code first waits for the kernels
  // its thread queued so far.
  void copyRows(void *dst, int64_t dstPitch, const void *src,
                int64_t srcPitch, int64_t width, int64_t rows) override;
  std::shared_ptr<char> scratch(int64_t bytes) override;
  std::function<void()> readyMarker() override;

  /// The stream the collectives run on.
  CUstream stream() const { return commStream.get(); }
  int device() const { return ordinal; }

private:
  struct Group {
    std::vector<int64_t> members;
    int index = 0; // this rank's place among the members
    ncclComm_t comm = nullptr;
  };
  /// One direction between this rank and a pipeline peer: a communicator
  /// of two (the sender is its rank 0) and a stream.
  struct Pair {
    ncclComm_t comm = nullptr;
    std::shared_ptr<CUstream_st> stream;
    /// Device memory for a header (receiving) or the connection's first
    /// message.
    void *header = nullptr;
    /// Received messages no recv has asked for yet, by tag, in order.
    struct Kept {
      void *data;
      int64_t bytes;
    };
    std::map<int64_t, std::deque<Kept>> kept;
  };
  const Group &group(size_t g, const char *operation) const;
  Pair &pairWith(int64_t peer, bool sending, const char *operation);
  /// Makes and connects the communicators of Options::pipelineGroup.
  void connectPipeline();
  /// Throws CommError on every rank when the ranks' pipeline groups
  /// differ in size.
  void checkPipelineSizes();
  /// Whether places `from` and `to` of the pipeline group are connected
  /// (Options::pipelinePairs).
  bool connects(size_t from, size_t to) const;
  /// Calls `visit` for the connected pairs this rank is in, in one order
  /// on every rank: (sender, receiver) by their places in the group; `pair`
  /// is sender place x group size + receiver place (pairIds' index).
  void forEachPair(
      const std::function<void(bool sends, int64_t peer, size_t pair)> &visit)
      const;
  /// The ids of the pairs this rank is in: [sender member][receiver member].
  std::vector<ncclUniqueId> pairIds();
  void closePairs(bool abort);
  /// Receives the next header from `from`: its tag and bytes.
  std::pair<int64_t, int64_t> nextHeader(int64_t from, Pair &pair);
  /// Throws CommError "`what` failed: <NCCL's description>" on failure.
  void checkNccl(ncclResult_t result, const std::string &what) const;
  void requireGroups(const char *operation) const;
  void exchangeIds(const std::vector<GroupSpec> &specs,
                   std::vector<ncclUniqueId> &ids);
  ncclUniqueId idFromFile(const GroupSpec &spec, bool first, const char *kind);
  /// Destroys (or, with `abort`, aborts) every communicator.
  void releaseCommunicators(bool abort);
  /// Waits up to `seconds` for stream() and the pairs' streams to finish:
  /// Idle, Failed, or Busy when one did not.
  NcclApi::StreamState drain(double seconds);
  void begin(const Event *ready);
  void finish(Event *done);
  void queueAllReduce(size_t g, const void *in, void *out, int64_t count,
                      DType type, int reduction);
  void queueAllGather(size_t g, const void *in, void *out, int64_t bytes);
  void queueReduceScatter(size_t g, const void *in, void *out, int64_t count,
                          DType type, int reduction);
  void queueAllToAll(size_t g, const void *in, void *out, int64_t bytes);
  void queueBroadcast(size_t g, void *data, int64_t bytes, int64_t root);

  Transport &bootstrap;
  int ordinal;
  Options options;
  NcclApi &api;
  std::shared_ptr<CUstream_st> commStream;
  std::vector<Group> groups;
  /// Whether createGroups has run.
  bool created = false;
  /// The bootstrap's group of every rank (after createGroups; -1: none).
  int64_t bootstrapWorld = -1;
  /// By peer rank: the pairs this rank sends on and receives on.
  std::map<int64_t, Pair> sending, receiving;
  /// createGroups calls so far (names the id files of each call).
  int generation = 0;
};

} // namespace ober::rt::cuda

#endif // OBER_RUNTIME_DEVICES_NCCL_H
