//===- CuBLASLt.cpp - matrix products through cuBLASLt --------------------===//
//
// Part of Ober-Train's runtime (no MLIR). cuBLASLt is resolved with dlsym
// like the driver; a GEMM's plan (descriptors, layouts, algorithm) is made
// on first use of its shape in a context and kept for the process.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Devices/CuBLASLt.h"
#include "ober/Runtime/Devices/CUDA.h"
#include "ober/Runtime/Devices/KernelProfile.h"
#include "ober/Runtime/Devices/CachingAllocator.h"

#include "Library.h"

#include <cublasLt.h>

#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>

using namespace ober::rt;
using namespace ober::rt::cuda;

namespace {
/// The most workspace a GEMM's algorithm may ask for.
constexpr uint64_t kWorkspaceBytes = uint64_t(32) << 20;

// clang-format off
#define OBER_CUBLASLT_FUNCTIONS(X)                                             \
  X(cublasLtCreate) X(cublasLtGetVersion) X(cublasLtGetStatusName)             \
  X(cublasLtGetStatusString) X(cublasLtMatmulDescCreate)                       \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)              \
  X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatmulPreferenceCreate)        \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)   \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)
// clang-format on

struct LtApi {
#define OBER_CUBLASLT_DECLARE(name) decltype(&::name) name = nullptr;
  OBER_CUBLASLT_FUNCTIONS(OBER_CUBLASLT_DECLARE)
#undef OBER_CUBLASLT_DECLARE
};

/// Opens cuBLASLt once; throws CudaError on every call when it is missing.
const LtApi &lt() {
  static std::once_flag once;
  static LtApi *api = nullptr;
  static std::string *error = nullptr;
  std::call_once(once, [] {
    detail::Library library = detail::openLibrary(
        detail::toolkitCandidates({"libcublasLt.so.13", "libcublasLt.so"}));
    if (!library.handle) {
      error = new std::string("cuBLASLt not found (libcublasLt.so.13 or "
                              "libcublasLt.so; set LD_LIBRARY_PATH or "
                              "CUDA_HOME): " +
                              library.error);
      return;
    }
    auto *table = new LtApi;
    std::string missing;
#define OBER_CUBLASLT_BIND(name)                                                     \
  detail::bindSymbol(library, table->name, #name, missing);
    OBER_CUBLASLT_FUNCTIONS(OBER_CUBLASLT_BIND)
#undef OBER_CUBLASLT_BIND
    if (!missing.empty())
      error = new std::string(library.path + " lacks " + missing +
                              ": the runtime needs cuBLASLt 12 or newer");
    else
      api = table;
  });
  if (!api)
    throw CudaError(*error);
  return *api;
}

void ltCheck(cublasStatus_t status, const std::string &what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  const LtApi &api = lt();
  throw CudaError(what + " failed: " + api.cublasLtGetStatusName(status) +
                  " (" + api.cublasLtGetStatusString(status) + ")");
}

/// cuBLASLt's names for a GEMM's types.
struct GemmTypes {
  cudaDataType ab, c;
  cublasComputeType_t compute;
};

std::optional<cudaDataType> sixteenBit(DType type) {
  if (type == DType::BF16)
    return CUDA_R_16BF;
  if (type == DType::F16)
    return CUDA_R_16F;
  return std::nullopt;
}

GemmTypes typesOf(const GemmDesc &d) {
  std::optional<cudaDataType> half = sixteenBit(d.a);
  if (d.a == d.b && half && !d.tf32 && (d.c == d.a || d.c == DType::F32))
    return {*half, d.c == DType::F32 ? CUDA_R_32F : *half, CUBLAS_COMPUTE_32F};
  if (d.a == DType::F32 && d.b == DType::F32 && d.c == DType::F32)
    return {CUDA_R_32F, CUDA_R_32F,
            d.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
  throw CudaError(std::string("cuBLASLt GEMM: unsupported element types A=") +
                  dtypeName(d.a) + ", B=" + dtypeName(d.b) +
                  ", C=" + dtypeName(d.c) + (d.tf32 ? " with tf32" : "") +
                  "; supported (A, B -> C): bfloat16, bfloat16 -> bfloat16 or "
                  "float32; float16, float16 -> float16 or float32; float32, "
                  "float32 -> float32 (tf32 only here)");
}

std::string describe(const GemmDesc &d) {
  return std::string(dtypeName(d.a)) + (d.tf32 ? " (tf32)" : "") +
         " GEMM M=" + std::to_string(d.m) + " N=" + std::to_string(d.n) +
         " K=" + std::to_string(d.k) +
         (d.batch > 1 ? " batch=" + std::to_string(d.batch) : "") +
         (d.transA ? " A^T" : "") + (d.transB ? " B^T" : "");
}

void validate(const GemmDesc &d) {
  if (d.m <= 0 || d.n <= 0 || d.k <= 0 || d.batch <= 0)
    throw CudaError("cuBLASLt GEMM: sizes must be positive, got " +
                    describe(d));
  if (d.batch > INT_MAX)
    throw CudaError("cuBLASLt GEMM: a batch of " + std::to_string(d.batch) +
                    " is over cuBLASLt's limit of 2^31 - 1");
}

/// What a shape needs on every call, made once.
struct Plan {
  cublasLtMatmulDesc_t op = nullptr;
  /// cuBLASLt's A, B and C: our B, A and C, column-major.
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
};

/// The alignment, in bytes, that every matrix of A, B and C starts on:
/// the largest power of two up to 256 (cuBLASLt's default assumption)
/// dividing each base address and, in a batch, each stride in bytes.
/// Algorithms are chosen for it: one that assumes more fails (or faults)
/// on a product of odd shape in a batch or at an offset.
uint32_t alignmentOf(const GemmDesc &d, const void *a, const void *b,
                     const void *c) {
  uint64_t bits = 256;
  auto fold = [&](uint64_t value) {
    if (value)
      bits = std::min<uint64_t>(bits, value & (~value + 1)); // lowest set bit
  };
  fold(reinterpret_cast<uintptr_t>(a));
  fold(reinterpret_cast<uintptr_t>(b));
  fold(reinterpret_cast<uintptr_t>(c));
  if (d.batch > 1) {
    fold(static_cast<uint64_t>(d.strideA) * dtypeSize(d.a));
    fold(static_cast<uint64_t>(d.strideB) * dtypeSize(d.b));
    fold(static_cast<uint64_t>(d.strideC) * dtypeSize(d.c));
  }
  return static_cast<uint32_t>(bits);
}

using PlanKey =
    std::tuple<CUcontext, DType, DType, DType, bool, int64_t, int64_t, int64_t,
               bool, bool, int64_t, int64_t, int64_t, int64_t, uint32_t>;

PlanKey keyOf(const GemmDesc &d, CUcontext context, uint32_t alignment) {
  return {context,  d.a,      d.b,     d.c,       d.tf32,
          d.m,      d.n,      d.k,     d.transA,  d.transB,
          d.batch,  d.strideA, d.strideB, d.strideC, alignment};
}

cublasLtMatrixLayout_t layout(cudaDataType type, int64_t rows, int64_t cols,
                              int64_t batch, int64_t stride) {
  const LtApi &api = lt();
  cublasLtMatrixLayout_t l = nullptr;
  ltCheck(api.cublasLtMatrixLayoutCreate(&l, type, rows, cols, rows),
          "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    ltCheck(api.cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "setting the batch count");
    ltCheck(api.cublasLtMatrixLayoutSetAttribute(
                l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "setting the batch stride");
  }
  return l;
}

void setOperation(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t which,
                  bool transposed) {
  cublasOperation_t value = transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  ltCheck(lt().cublasLtMatmulDescSetAttribute(op, which, &value, sizeof(value)),
          "setting a transpose");
}

/// Row-major C[M,N] = op(A) op(B) as column-major C^T[N,M] = op(B)^T op(A)^T:
/// B's buffer read column-major is op(B)^T when B is not transposed.
Plan makePlan(const GemmDesc &d, const GemmTypes &t, cublasLtHandle_t handle,
              uint32_t alignment) {
  const LtApi &api = lt();
  Plan p;
  ltCheck(api.cublasLtMatmulDescCreate(&p.op, t.compute, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  setOperation(p.op, CUBLASLT_MATMUL_DESC_TRANSA, d.transB);
  setOperation(p.op, CUBLASLT_MATMUL_DESC_TRANSB, d.transA);
  p.a = d.transB ? layout(t.ab, d.k, d.n, d.batch, d.strideB)
                 : layout(t.ab, d.n, d.k, d.batch, d.strideB);
  p.b = d.transA ? layout(t.ab, d.m, d.k, d.batch, d.strideA)
                 : layout(t.ab, d.k, d.m, d.batch, d.strideA);
  p.c = layout(t.c, d.n, d.m, d.batch, d.strideC);
  cublasLtMatmulPreference_t preference = nullptr;
  ltCheck(api.cublasLtMatmulPreferenceCreate(&preference),
          "cublasLtMatmulPreferenceCreate");
  uint64_t limit = kWorkspaceBytes;
  api.cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit,
      sizeof(limit));
  for (cublasLtMatmulPreferenceAttributes_t which :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    api.cublasLtMatmulPreferenceSetAttribute(preference, which, &alignment,
                                             sizeof(alignment));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status = api.cublasLtMatmulAlgoGetHeuristic(
      handle, p.op, p.a, p.b, p.c, p.c, preference, 1, &result, &found);
  api.cublasLtMatmulPreferenceDestroy(preference);
  ltCheck(status, "cublasLtMatmulAlgoGetHeuristic for the " + describe(d));
  if (found == 0)
    throw CudaError("cuBLASLt has no algorithm for the " + describe(d) +
                    " within " + std::to_string(kWorkspaceBytes >> 20) +
                    " MiB of workspace");
  p.algo = result.algo;
  p.workspace = result.workspaceSize;
  return p;
}

/// The plans and one handle per context, for the process.
struct Plans {
  std::mutex mutex;
  std::map<CUcontext, cublasLtHandle_t> handles;
  std::map<PlanKey, Plan> byShape;
};
Plans &plans() {
  static auto *p = new Plans;
  return *p;
}

/// The handle of `context`, made on first use (all.mutex held).
cublasLtHandle_t handleIn(Plans &all, CUcontext context) {
  cublasLtHandle_t &handle = all.handles[context];
  if (!handle)
    ltCheck(lt().cublasLtCreate(&handle), "cublasLtCreate");
  return handle;
}

/// The handle and plan for `d` in `context` (made on first use).
std::pair<cublasLtHandle_t, const Plan *>
planFor(const GemmDesc &d, const GemmTypes &t, CUcontext context,
        uint32_t alignment) {
  Plans &all = plans();
  std::lock_guard<std::mutex> lock(all.mutex);
  cublasLtHandle_t handle = handleIn(all, context);
  PlanKey key = keyOf(d, context, alignment);
  auto it = all.byShape.find(key);
  if (it == all.byShape.end())
    it = all.byShape.emplace(key, makePlan(d, t, handle, alignment)).first;
  return {handle, &it->second};
}

GemmDesc packed(GemmDesc d) {
  if (!d.strideA)
    d.strideA = d.m * d.k;
  if (!d.strideB)
    d.strideB = d.k * d.n;
  if (!d.strideC)
    d.strideC = d.m * d.n;
  return d;
}
} // namespace

void ober::rt::cuda::openGemms() {
  CUcontext context = sharedDevice(currentDevice()).context();
  Plans &all = plans();
  std::lock_guard<std::mutex> lock(all.mutex);
  handleIn(all, context);
}

void ober::rt::cuda::gemm(const GemmDesc &desc, const void *a, const void *b,
                          void *c, CUstream stream) {
  validate(desc);
  GemmDesc d = packed(desc);
  GemmTypes types = typesOf(d);
  int ordinal = currentDevice();
  auto [handle, plan] = planFor(d, types, sharedDevice(ordinal).context(),
                                alignmentOf(d, a, b, c));
  CachingAllocator &allocator = deviceAllocator(ordinal);
  void *workspace = allocator.allocate(plan->workspace, stream);
  KernelProfile *profile = KernelProfile::current();
  if (profile)
    profile->begin(stream);
  cublasStatus_t status = lt().cublasLtMatmul(
      handle, plan->op, &d.alpha, b, plan->a, a, plan->b, &d.beta, c, plan->c,
      c, plan->c, &plan->algo, workspace, plan->workspace, stream);
  if (profile)
    profile->end("cuBLASLt " + describe(d), stream);
  allocator.free(workspace); // reused in `stream`'s order
  ltCheck(status, "cublasLtMatmul (" + describe(d) + ")");
}

const char *ober::rt::cuda::gemmPrecisionName(GemmPrecision precision) {
  switch (precision) {
  case GemmPrecision::BF16:
    return "bf16";
  case GemmPrecision::F16:
    return "f16";
  case GemmPrecision::TF32:
    return "tf32";
  case GemmPrecision::F32:
    break;
  }
  return "f32";
}

GemmDesc ober::rt::cuda::gemmDescFor(GemmPrecision precision, int64_t m,
                                     int64_t n, int64_t k, bool transA,
                                     bool transB) {
  GemmDesc d;
  DType type = precision == GemmPrecision::BF16  ? DType::BF16
               : precision == GemmPrecision::F16 ? DType::F16
                                                 : DType::F32;
  d.a = d.b = d.c = type;
  d.tf32 = precision == GemmPrecision::TF32;
  d.m = m;
  d.n = n;
  d.k = k;
  d.transA = transA;
  d.transB = transB;
  return d;
}

size_t ober::rt::cuda::cublasLtVersion() { return lt().cublasLtGetVersion(); }
