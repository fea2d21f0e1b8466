//===- MPITransport.cpp - ranks as processes, through MPI -----------------===//
//
// Part of Ober-Train's runtime (no MLIR). Groups are communicators split
// from the world once. Reductions of f32, f64 and integers use MPI's own
// operations; f16, bf16 and i1 use operations of the runtime's
// (reduceInto). All-reduces and reduce-scatters of 1 MiB and more run
// as rings of MPI_Sendrecv (Ring.h), whose scratch memory is a piece of
// the message instead of the library's copies of all of it. Sends are
// copied and posted without waiting, as the partitioner's programs expect
// of them.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Ring.h"

#include "ober/Runtime/MPI.h"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <list>

using namespace ober::rt;

namespace {

void check(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw CommError(std::string(what) + " failed: " + std::string(text, length));
}

int countOf(int64_t n) {
  if (n > INT_MAX)
    throw CommError("a message of " + std::to_string(n) +
                    " elements is over MPI's limit of 2^31 - 1");
  return static_cast<int>(n);
}

template <DType T, int R>
void userReduce(void *in, void *inout, int *len, MPI_Datatype *) {
  reduceInto(T, R, inout, in, *len);
}

template <DType T> MPI_Op userOp(int reduction) {
  static MPI_Op ops[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  static MPI_User_function *fns[4] = {
      userReduce<T, OBER_REDUCE_SUM>, userReduce<T, OBER_REDUCE_MAX>,
      userReduce<T, OBER_REDUCE_MIN>, userReduce<T, OBER_REDUCE_PRODUCT>};
  if (ops[reduction] == MPI_OP_NULL)
    check(MPI_Op_create(fns[reduction], /*commute=*/1, &ops[reduction]),
          "MPI_Op_create");
  return ops[reduction];
}

/// MPI's type and operation for elements of `type`.
std::pair<MPI_Datatype, MPI_Op> typeAndOp(DType type, int reduction) {
  static const MPI_Op builtin[4] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
  switch (type) {
  case DType::F32:
    return {MPI_FLOAT, builtin[reduction]};
  case DType::F64:
    return {MPI_DOUBLE, builtin[reduction]};
  case DType::I64:
    return {MPI_INT64_T, builtin[reduction]};
  case DType::I32:
    return {MPI_INT32_T, builtin[reduction]};
  case DType::I16:
    return {MPI_INT16_T, builtin[reduction]};
  case DType::I8:
    return {MPI_INT8_T, builtin[reduction]};
  case DType::U8:
    return {MPI_UINT8_T, builtin[reduction]};
  case DType::F16:
    return {MPI_UINT16_T, userOp<DType::F16>(reduction)};
  case DType::BF16:
    return {MPI_UINT16_T, userOp<DType::BF16>(reduction)};
  case DType::Bool:
    return {MPI_UINT8_T, userOp<DType::Bool>(reduction)};
  default:
    throw CommError(std::string("cannot reduce ") + dtypeName(type) +
                    " elements");
  }
}

class MPITransport final : public Transport {
public:
  MPITransport() {
    MPI_Comm_rank(MPI_COMM_WORLD, &self);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
  }
  ~MPITransport() override {
    for (Pending &p : sends)
      MPI_Wait(&p.request, MPI_STATUS_IGNORE);
    for (MPI_Comm &c : comms)
      MPI_Comm_free(&c);
  }

  int64_t rank() const override { return self; }
  int64_t size() const override { return world; }

  void createGroups(const std::vector<GroupSpec> &specs) override {
    for (const GroupSpec &g : specs) {
      int key = 0;
      while (g.members[key] != self)
        ++key;
      MPI_Comm comm;
      check(
          MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(g.color), key, &comm),
          "MPI_Comm_split");
      comms.push_back(comm);
      rings.push_back(ringOf(comm, key, static_cast<int>(g.members.size())));
    }
  }

  void allReduce(size_t g, const void *in, void *out, int64_t count, DType type,
                 int reduction) override {
    // (typeAndOp first: it refuses a type nothing reduces.)
    auto [t, op] = typeAndOp(type, reduction);
    if (count * static_cast<int64_t>(dtypeSize(type)) >= kRingBytes) {
      std::memcpy(out, in, count * dtypeSize(type));
      return ringAllReduce(rings.at(g), out, count, type, reduction);
    }
    check(MPI_Allreduce(in, out, countOf(count), t, op, comms.at(g)),
          "MPI_Allreduce");
  }
  void allGather(size_t g, const void *in, void *out, int64_t bytes) override {
    check(MPI_Allgather(in, countOf(bytes), MPI_BYTE, out, countOf(bytes),
                        MPI_BYTE, comms.at(g)),
          "MPI_Allgather");
  }
  void reduceScatter(size_t g, const void *in, void *out, int64_t count,
                     DType type, int reduction) override {
    auto [t, op] = typeAndOp(type, reduction);
    const Ring &r = rings.at(g);
    if (count * r.members * static_cast<int64_t>(dtypeSize(type)) >= kRingBytes)
      return ringReduceScatter(r, in, out, count, type, reduction);
    check(MPI_Reduce_scatter_block(in, out, countOf(count), t, op, comms.at(g)),
          "MPI_Reduce_scatter_block");
  }
  void allToAll(size_t g, const void *in, void *out, int64_t bytes) override {
    check(MPI_Alltoall(in, countOf(bytes), MPI_BYTE, out, countOf(bytes),
                       MPI_BYTE, comms.at(g)),
          "MPI_Alltoall");
  }
  void broadcast(size_t g, void *data, int64_t bytes, int64_t root) override {
    check(MPI_Bcast(data, countOf(bytes), MPI_BYTE, static_cast<int>(root),
                    comms.at(g)),
          "MPI_Bcast");
  }
  void send(int64_t to, int64_t tag, const void *data, int64_t bytes) override {
    reap();
    const char *p = static_cast<const char *>(data);
    sends.push_back({MPI_REQUEST_NULL, std::vector<char>(p, p + bytes)});
    Pending &s = sends.back();
    check(MPI_Isend(s.data.data(), countOf(bytes), MPI_BYTE,
                    static_cast<int>(to), static_cast<int>(tag), MPI_COMM_WORLD,
                    &s.request),
          "MPI_Isend");
  }
  void recv(int64_t from, int64_t tag, void *data, int64_t bytes) override {
    reap();
    MPI_Status status;
    check(MPI_Recv(data, countOf(bytes), MPI_BYTE, static_cast<int>(from),
                   static_cast<int>(tag), MPI_COMM_WORLD, &status),
          "MPI_Recv");
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    if (got != bytes)
      throw CommError("rank " + std::to_string(from) + " sent " +
                      std::to_string(got) + " bytes, expected " +
                      std::to_string(bytes));
  }

private:
  /// Messages (a reduce-scatter's whole input) from this size on reduce
  /// as rings of MPI_Sendrecv (Ring.h) in pieces of kRingChunk: the
  /// library's own algorithms would hold one or two copies of the message
  /// at once.
  static constexpr int64_t kRingBytes = 1 << 20, kRingChunk = 1 << 20;
  static constexpr int kRingTag = 1;

  /// The ring of member `index` of `members` in `comm` (made once per
  /// group, with it).
  static Ring ringOf(MPI_Comm comm, int index, int members) {
    int next = (index + 1) % members, previous = (index + members - 1) % members;
    auto exchange = [=](const void *send, int64_t sendBytes, void *recv,
                        int64_t recvBytes) {
      check(MPI_Sendrecv(send, countOf(sendBytes), MPI_BYTE, next, kRingTag,
                         recv, countOf(recvBytes), MPI_BYTE, previous,
                         kRingTag, comm, MPI_STATUS_IGNORE),
            "MPI_Sendrecv");
    };
    return {exchange, index, members, kRingChunk};
  }

  struct Pending {
    MPI_Request request;
    std::vector<char> data;
  };
  /// Frees the copies of sends that completed.
  void reap() {
    for (auto it = sends.begin(); it != sends.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? sends.erase(it) : std::next(it);
    }
  }

  int self = 0, world = 1;
  std::vector<MPI_Comm> comms;
  std::vector<Ring> rings; // one per communicator
  std::list<Pending> sends;
};
} // namespace

std::unique_ptr<Transport> ober::rt::mpiTransport(std::string &error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Blocked ranks yield their core to the computing threads.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS) {
      error = "MPI_Init_thread failed";
      return nullptr;
    }
    if (provided < MPI_THREAD_SERIALIZED) {
      error = "this MPI library does not allow calls from a second thread "
              "(MPI_THREAD_SERIALIZED)";
      return nullptr;
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MPITransport>();
}

void ober::rt::mpiFinalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

void ober::rt::mpiAbort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}
