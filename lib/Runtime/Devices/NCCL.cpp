//===- NCCL.cpp - collectives between GPUs through NCCL -------------------===//
//
// Part of Ober-Train's runtime (no MLIR). NCCL's type and reduction
// mapping, and systemNccl(): NCCL resolved with dlsym like the driver, with
// the driver calls NcclTransport makes. The transport is in
// NcclTransport.cpp, the loopback NCCL in NcclLoopback.cpp.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/NCCL.h"
#include "ober/Runtime/Devices/CachingAllocator.h"
#include "ober/Runtime/Devices/Modules.h"

#include "Library.h"

#include <mutex>
#include <type_traits>

using namespace ober::rt;
using namespace ober::rt::cuda;

//===----------------------------------------------------------------------===//
// Types and reductions (no library needed)
//===----------------------------------------------------------------------===//

ncclDataType_t ober::rt::cuda::ncclTypeOf(DType type) {
  switch (type) {
  case DType::F16:
    return ncclFloat16;
  case DType::BF16:
    return ncclBfloat16;
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::I8:
    return ncclInt8;
  case DType::U8:
  case DType::Bool:
    return ncclUint8;
  case DType::I32:
    return ncclInt32;
  case DType::I64:
    return ncclInt64;
  case DType::I16:
  case DType::Unicode:
    break;
  }
  throw CommError(std::string("NCCL has no ") + dtypeName(type) +
                  " type; supported: float16, bfloat16, float32, float64, "
                  "int8, uint8, int32, int64, bool");
}

ncclRedOp_t ober::rt::cuda::ncclReductionOf(int reduction, DType type) {
  bool boolean = type == DType::Bool; // 0/1 bytes: or and and
  switch (reduction) {
  case OBER_REDUCE_SUM:
    return boolean ? ncclMax : ncclSum;
  case OBER_REDUCE_MAX:
    return ncclMax;
  case OBER_REDUCE_MIN:
    return ncclMin;
  case OBER_REDUCE_PRODUCT:
    return boolean ? ncclMin : ncclProd;
  default:
    throw CommError("unknown reduction " + std::to_string(reduction) +
                    "; supported: sum, max, min, product "
                    "(OBER_REDUCE_SUM .. OBER_REDUCE_PRODUCT)");
  }
}

//===----------------------------------------------------------------------===//
// The library
//===----------------------------------------------------------------------===//

namespace {
// clang-format off
#define OBER_NCCL_FUNCTIONS(X)                                                 \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommDestroy)  \
  X(ncclCommAbort) X(ncclGetErrorString) X(ncclAllReduce) X(ncclAllGather)     \
  X(ncclReduceScatter) X(ncclBroadcast) X(ncclSend) X(ncclRecv)                \
  X(ncclGroupStart) X(ncclGroupEnd)
// clang-format on

/// NCCL's functions, resolved from the library.
struct NcclLibrary {
#define OBER_NCCL_DECLARE(name) decltype(&::name) name = nullptr;
  OBER_NCCL_FUNCTIONS(OBER_NCCL_DECLARE)
#undef OBER_NCCL_DECLARE
};

/// Opens NCCL once; throws CommError on every call when it is missing.
const NcclLibrary &nccl() {
  static std::once_flag once;
  static NcclLibrary *api = nullptr;
  static std::string *error = nullptr;
  std::call_once(once, [] {
    detail::Library library = detail::openLibrary(
        detail::toolkitCandidates({"libnccl.so.2", "libnccl.so"}));
    if (!library.handle) {
      error = new std::string("NCCL not found (libnccl.so.2; set "
                              "LD_LIBRARY_PATH or CUDA_HOME): " +
                              library.error);
      return;
    }
    auto *table = new NcclLibrary;
    std::string missing;
#define OBER_NCCL_BIND(name)                                                     \
  detail::bindSymbol(library, table->name, #name, missing);
    OBER_NCCL_FUNCTIONS(OBER_NCCL_BIND)
#undef OBER_NCCL_BIND
    if (!missing.empty())
      error = new std::string(library.path + " lacks " + missing +
                              ": the runtime needs NCCL 2.19 or newer");
    else
      api = table;
  });
  if (!api)
    throw CommError(*error);
  return *api;
}

void ncclCheck(ncclResult_t result, const std::string &what) {
  if (result != ncclSuccess)
    throw CommError(what + " failed: " + nccl().ncclGetErrorString(result));
}

} // namespace

int ober::rt::cuda::ncclVersion() {
  int version = 0;
  ncclCheck(nccl().ncclGetVersion(&version), "ncclGetVersion");
  return version;
}

//===----------------------------------------------------------------------===//
// The system's NCCL and driver
//===----------------------------------------------------------------------===//

NcclApi::~NcclApi() = default;

namespace {
/// Forwards to NCCL and the driver.
class SystemNccl final : public NcclApi {
public:
  ncclResult_t getUniqueId(ncclUniqueId *id) override {
    return nccl().ncclGetUniqueId(id);
  }
  ncclResult_t commInitRank(ncclComm_t *comm, int ranks, ncclUniqueId id,
                            int rank) override {
    return nccl().ncclCommInitRank(comm, ranks, id, rank);
  }
  ncclResult_t commDestroy(ncclComm_t comm) override {
    return nccl().ncclCommDestroy(comm);
  }
  ncclResult_t commAbort(ncclComm_t comm) override {
    return nccl().ncclCommAbort(comm);
  }
  const char *errorString(ncclResult_t result) override {
    return nccl().ncclGetErrorString(result);
  }
  ncclResult_t allReduce(const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                         CUstream stream) override {
    return nccl().ncclAllReduce(in, out, count, type, op, comm, stream);
  }
  ncclResult_t allGather(const void *in, void *out, size_t count,
                         ncclDataType_t type, ncclComm_t comm,
                         CUstream stream) override {
    return nccl().ncclAllGather(in, out, count, type, comm, stream);
  }
  ncclResult_t reduceScatter(const void *in, void *out, size_t count,
                             ncclDataType_t type, ncclRedOp_t op,
                             ncclComm_t comm, CUstream stream) override {
    return nccl().ncclReduceScatter(in, out, count, type, op, comm, stream);
  }
  ncclResult_t broadcast(const void *in, void *out, size_t count,
                         ncclDataType_t type, int root, ncclComm_t comm,
                         CUstream stream) override {
    return nccl().ncclBroadcast(in, out, count, type, root, comm, stream);
  }
  ncclResult_t send(const void *data, size_t count, ncclDataType_t type,
                    int peer, ncclComm_t comm, CUstream stream) override {
    return nccl().ncclSend(data, count, type, peer, comm, stream);
  }
  ncclResult_t recv(void *data, size_t count, ncclDataType_t type, int peer,
                    ncclComm_t comm, CUstream stream) override {
    return nccl().ncclRecv(data, count, type, peer, comm, stream);
  }
  ncclResult_t groupStart() override { return nccl().ncclGroupStart(); }
  ncclResult_t groupEnd() override { return nccl().ncclGroupEnd(); }

  void useDevice(int device) override { sharedDevice(device); }
  std::shared_ptr<CUstream_st> createStream() override {
    // The Stream owns the handle; the alias keeps it alive.
    auto owner = std::make_shared<Stream>();
    return std::shared_ptr<CUstream_st>(owner, owner->get());
  }
  void synchronize(CUstream stream) override {
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  StreamState query(CUstream stream) override {
    CUresult r = driver().cuStreamQuery(stream);
    return r == CUDA_SUCCESS          ? StreamState::Idle
           : r == CUDA_ERROR_NOT_READY ? StreamState::Busy
                                      : StreamState::Failed;
  }
  void waitFor(CUstream stream, const Event &ready) override {
    check(driver().cuStreamWaitEvent(stream, ready.get(), 0),
          "cuStreamWaitEvent (a collective's input)");
  }
  void record(Event &done, CUstream stream) override { done.record(stream); }
  void *allocate(int device, size_t bytes, CUstream stream) override {
    return deviceAllocator(device).allocate(bytes, stream);
  }
  void release(int device, void *memory) override {
    deviceAllocator(device).free(memory);
  }
  void copy(void *to, const void *from, size_t bytes,
            CUstream stream) override {
    copyDeviceAsync(to, from, bytes, stream);
  }
  void copyRows(void *to, size_t toPitch, const void *from, size_t fromPitch,
                size_t width, size_t rows, CUstream stream) override {
    copyRowsAsync(to, toPitch, from, fromPitch, width, rows, stream);
  }
  void copyToHost(void *host, const void *from, size_t bytes,
                  CUstream stream) override {
    copyToHostAsync(host, from, bytes, stream);
  }
  void fill32(void *to, uint32_t value, size_t count,
              CUstream stream) override {
    memset32Async(to, value, count, stream);
  }
  void follow(CUstream waiter, CUstream stream) override {
    Event point(/*timing=*/false);
    point.record(stream);
    // Destroying the event leaves the wait queued on `waiter` in place.
    check(driver().cuStreamWaitEvent(waiter, point.get(), 0),
          "cuStreamWaitEvent (a pipeline transfer's buffer)");
  }
  void useOn(int device, void *memory, CUstream stream) override {
    deviceAllocator(device).recordStream(memory, stream);
  }
  std::shared_ptr<Event> markProgram() override {
    auto point = std::make_shared<Event>(/*timing=*/false);
    point->record(programStream());
    return point;
  }
  void retireStream(int device, CUstream stream) override {
    deviceAllocator(device).retireStream(stream);
  }
};
} // namespace

NcclApi &ober::rt::cuda::systemNccl() {
  nccl(); // throws while NCCL is missing
  static SystemNccl api;
  return api;
}
