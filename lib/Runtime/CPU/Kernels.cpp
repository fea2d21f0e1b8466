//===- Kernels.cpp - matrix products and convolutions on oneDNN ------------===//
//
// Part of Ober-Train's runtime (no MLIR). The kernel library behind
// ober/Runtime/CPUKernels.h. Each distinct descriptor gets its primitives
// once (per thread), with the memory layouts oneDNN prefers: operands in
// the program's plain row-major layout are reordered into them and back,
// as PyTorch's oneDNN path does.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/CPUKernels.h"
#include "ober/Runtime/DType.h"

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

using dnnl::memory;
using ober::rt::DType;
using ober::rt::dtypeSize;
using ober::rt::loadFloat;
using ober::rt::storeFloat;

namespace {

using Dims = memory::dims;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

/// Reports an internal error of the kernel library and ends the process:
/// shapes were checked when the program was compiled, so a failure here is
/// a bug (or an unsupported machine), not bad input.
[[noreturn]] void fail(const char *kernel, const std::vector<int64_t> &desc,
                       const char *what) {
  std::fprintf(stderr, "ober: kernel %s failed (%s); descriptor [", kernel,
               what);
  for (size_t i = 0; i < desc.size(); ++i)
    std::fprintf(stderr, "%s%lld", i ? ", " : "",
                 static_cast<long long>(desc[i]));
  std::fprintf(stderr, "]\n");
  std::exit(70);
}

/// The data of an operand of `bytes`-byte elements (f32 by default).
void *dataOf(const ober_rt_buffer *b, size_t bytes = sizeof(float)) {
  const ober_rt_memref *m = b->descriptor;
  return static_cast<char *>(m->aligned) + m->offset * bytes;
}

/// A descriptor's fields (a 1-D i64 buffer: its first size is the count).
std::vector<int64_t> fieldsOf(const ober_rt_buffer *b) {
  const ober_rt_memref *m = b->descriptor;
  const int64_t *sizes = reinterpret_cast<const int64_t *>(m + 1);
  const int64_t *data = static_cast<const int64_t *>(m->aligned) + m->offset;
  return std::vector<int64_t>(data, data + sizes[0]);
}

struct Context {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Context &context() {
  thread_local Context c;
  return c;
}

/// A plain operand and the layout a primitive wants it in: a reorder and a
/// buffer of that layout when they differ.
struct Staged {
  memory::desc plain, wanted;
  dnnl::reorder toWanted, toPlain;
  memory buffer; // in the wanted layout, when it differs
  bool same = true;

  void prepare(const memory::desc &p, const memory::desc &w, bool in,
               bool out) {
    plain = p;
    wanted = w;
    same = p == w;
    if (same)
      return;
    Context &c = context();
    buffer = memory(w, c.engine);
    if (in)
      toWanted = dnnl::reorder(memory(p, c.engine, DNNL_MEMORY_NONE),
                               buffer);
    if (out)
      toPlain = dnnl::reorder(buffer, memory(p, c.engine, DNNL_MEMORY_NONE));
  }
  /// The operand as the primitive reads it (reordered from `data`).
  memory input(void *data) {
    Context &c = context();
    memory user(plain, c.engine, data);
    if (same)
      return user;
    toWanted.execute(c.stream, user, buffer);
    return buffer;
  }
  /// Where the primitive writes; `finish` moves it to `data`.
  memory output(void *data) {
    return same ? memory(plain, context().engine, data) : buffer;
  }
  void finish(void *data) {
    if (same)
      return;
    Context &c = context();
    memory user(plain, c.engine, data);
    toPlain.execute(c.stream, buffer, user);
  }
};

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

struct Matmul {
  dnnl::matmul primitive;
  memory::desc a, b, c;
};

std::unique_ptr<Matmul> makeMatmul(const std::vector<int64_t> &f) {
  int64_t batch = f[OBER_MATMUL_BATCH], ab = f[OBER_MATMUL_A_BATCH],
          bb = f[OBER_MATMUL_B_BATCH], m = f[OBER_MATMUL_M],
          n = f[OBER_MATMUL_N], k = f[OBER_MATMUL_K];
  bool ta = f[OBER_MATMUL_TRANSPOSE_A], tb = f[OBER_MATMUL_TRANSPOSE_B];
  auto md = [&](int64_t b, int64_t rows, int64_t cols, bool t) {
    // Logical [b, rows, cols]; stored [b, cols, rows] when transposed.
    Dims strides = t ? Dims{rows * cols, 1, rows} : Dims{rows * cols, cols, 1};
    if (batch == 1)
      return memory::desc({rows, cols}, kF32, {strides[1], strides[2]});
    return memory::desc({b, rows, cols}, kF32, strides);
  };
  auto mm = std::make_unique<Matmul>();
  mm->a = md(ab, m, k, ta);
  mm->b = md(bb, k, n, tb);
  mm->c = md(batch, m, n, false);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(mm->a, mm->b, mm->c),
                                  context().engine);
  mm->primitive = dnnl::matmul(pd);
  return mm;
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

/// The memory descriptors and attributes of a convolution's geometry.
struct ConvGeometry {
  memory::desc src, weights, bias, dst;
  Dims strides, dilations, padBegin, padEnd;

  explicit ConvGeometry(const std::vector<int64_t> &f) {
    int64_t k = f[OBER_CONV_SPATIAL], groups = f[OBER_CONV_GROUPS];
    auto array = [&](int which) {
      const int64_t *p = f.data() + OBER_CONV_ARRAYS + which * k;
      return Dims(p, p + k);
    };
    Dims in = array(OBER_CONV_IN), kernel = array(OBER_CONV_KERNEL),
         out = array(OBER_CONV_OUT);
    strides = array(OBER_CONV_STRIDE);
    dilations = array(OBER_CONV_DILATION);
    for (int64_t &d : dilations)
      d -= 1; // oneDNN counts the gaps
    padBegin = array(OBER_CONV_PAD_BEGIN);
    padEnd = array(OBER_CONV_PAD_END);
    static const Tag plain[] = {Tag::ncw, Tag::nchw, Tag::ncdhw};
    static const Tag oi[] = {Tag::oiw, Tag::oihw, Tag::oidhw};
    static const Tag goi[] = {Tag::goiw, Tag::goihw, Tag::goidhw};
    Dims srcDims = {f[OBER_CONV_N], f[OBER_CONV_C]};
    srcDims.insert(srcDims.end(), in.begin(), in.end());
    Dims dstDims = {f[OBER_CONV_N], f[OBER_CONV_O]};
    dstDims.insert(dstDims.end(), out.begin(), out.end());
    Dims wDims;
    if (groups > 1)
      wDims = {groups, f[OBER_CONV_O] / groups, f[OBER_CONV_C] / groups};
    else
      wDims = {f[OBER_CONV_O], f[OBER_CONV_C]};
    wDims.insert(wDims.end(), kernel.begin(), kernel.end());
    src = memory::desc(srcDims, kF32, plain[k - 1]);
    dst = memory::desc(dstDims, kF32, plain[k - 1]);
    weights = memory::desc(wDims, kF32, groups > 1 ? goi[k - 1] : oi[k - 1]);
    if (f[OBER_CONV_HAS_BIAS])
      bias = memory::desc({f[OBER_CONV_O]}, kF32, Tag::x);
  }
  static memory::desc any(const memory::desc &d) {
    return memory::desc(d.dims(), kF32, Tag::any);
  }
  dnnl::convolution_forward::primitive_desc forward() const {
    dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
        any(src), any(weights), bias, any(dst), strides, dilations, padBegin,
        padEnd);
    return {d, context().engine};
  }
};

struct ConvForward {
  dnnl::convolution_forward primitive;
  Staged src, weights, dst;
  memory::desc bias; // plain [O], when the convolution has one
};

std::unique_ptr<ConvForward> makeConv(const std::vector<int64_t> &f) {
  ConvGeometry g(f);
  auto pd = g.forward();
  auto conv = std::make_unique<ConvForward>();
  conv->primitive = dnnl::convolution_forward(pd);
  conv->src.prepare(g.src, pd.src_desc(), true, false);
  conv->weights.prepare(g.weights, pd.weights_desc(), true, false);
  conv->dst.prepare(g.dst, pd.dst_desc(), false, true);
  conv->bias = g.bias;
  return conv;
}

struct ConvBackwardData {
  dnnl::convolution_backward_data primitive;
  Staged diffDst, weights, diffSrc;
};

std::unique_ptr<ConvBackwardData>
makeConvBackwardData(const std::vector<int64_t> &f) {
  ConvGeometry g(f);
  dnnl::convolution_backward_data::desc d(
      dnnl::algorithm::convolution_direct, ConvGeometry::any(g.src),
      ConvGeometry::any(g.weights), ConvGeometry::any(g.dst), g.strides,
      g.dilations, g.padBegin, g.padEnd);
  dnnl::convolution_backward_data::primitive_desc pd(d, context().engine,
                                                     g.forward());
  auto conv = std::make_unique<ConvBackwardData>();
  conv->primitive = dnnl::convolution_backward_data(pd);
  conv->diffDst.prepare(g.dst, pd.diff_dst_desc(), true, false);
  conv->weights.prepare(g.weights, pd.weights_desc(), true, false);
  conv->diffSrc.prepare(g.src, pd.diff_src_desc(), false, true);
  return conv;
}

struct ConvBackwardWeights {
  dnnl::convolution_backward_weights primitive;
  Staged src, diffDst, diffWeights;
};

std::unique_ptr<ConvBackwardWeights>
makeConvBackwardWeights(const std::vector<int64_t> &f) {
  ConvGeometry g(f);
  dnnl::convolution_backward_weights::desc d(
      dnnl::algorithm::convolution_direct, ConvGeometry::any(g.src),
      ConvGeometry::any(g.weights), ConvGeometry::any(g.dst), g.strides,
      g.dilations, g.padBegin, g.padEnd);
  dnnl::convolution_backward_weights::primitive_desc pd(d, context().engine,
                                                        g.forward());
  auto conv = std::make_unique<ConvBackwardWeights>();
  conv->primitive = dnnl::convolution_backward_weights(pd);
  conv->src.prepare(g.src, pd.src_desc(), true, false);
  conv->diffDst.prepare(g.dst, pd.diff_dst_desc(), true, false);
  conv->diffWeights.prepare(g.weights, pd.diff_weights_desc(), false, true);
  return conv;
}

/// The kernel of `desc`, made by `make` the first time this thread sees it.
template <typename Kernel, typename Make>
Kernel &kernelFor(const char *name, const std::vector<int64_t> &fields,
                  Make make) {
  thread_local std::map<std::vector<int64_t>, std::unique_ptr<Kernel>> cache;
  auto it = cache.find(fields);
  if (it != cache.end())
    return *it->second;
  try {
    return *cache.emplace(fields, make(fields)).first->second;
  } catch (const dnnl::error &e) {
    fail(name, fields, e.what());
  }
}

template <typename Run>
void guarded(const char *name, const std::vector<int64_t> &fields, Run run) {
  try {
    run();
    context().stream.wait();
  } catch (const dnnl::error &e) {
    fail(name, fields, e.what());
  }
}

/// The f32 product of descriptor `f` on f32 buffers for kernel `name`
/// (whose descriptor may name a narrower type: `f` says f32).
void multiply(const char *name, const std::vector<int64_t> &f, void *a,
              void *b, void *c) {
  Matmul &mm = kernelFor<Matmul>(name, f, makeMatmul);
  guarded(name, f, [&] {
    dnnl::engine &e = context().engine;
    mm.primitive.execute(context().stream,
                         {{DNNL_ARG_SRC, memory(mm.a, e, a)},
                          {DNNL_ARG_WEIGHTS, memory(mm.b, e, b)},
                          {DNNL_ARG_DST, memory(mm.c, e, c)}});
  });
}

/// A product on bf16 or f16 buffers (`type`) as CUDA's library computes
/// it: the operands widened to f32, the product accumulated in f32, the
/// result rounded once to nearest even. Programs lowered with
/// low-precision-products call it (the CUDA target's mapped to the CPU,
/// --test-cuda-mapping-on-cpu; ober-run --low-precision-products); the CPU
/// target's own widen their operands themselves.
void lowPrecisionMatmul(const char *name, const ober_rt_buffer *desc,
                        const ober_rt_buffer *a, const ober_rt_buffer *b,
                        ober_rt_buffer *c, DType type) {
  std::vector<int64_t> f = fieldsOf(desc);
  if (f[OBER_MATMUL_DTYPE] != static_cast<int64_t>(type))
    fail(name, f, "the descriptor names another element type");
  int64_t m = f[OBER_MATMUL_M], n = f[OBER_MATMUL_N], k = f[OBER_MATMUL_K];
  size_t bytes = dtypeSize(type);
  auto widen = [&](const ober_rt_buffer *x, int64_t elements) {
    std::vector<float> wide(static_cast<size_t>(elements));
    const char *p = static_cast<const char *>(dataOf(x, bytes));
    for (size_t i = 0; i < wide.size(); ++i)
      wide[i] = static_cast<float>(loadFloat(type, p + i * bytes));
    return wide;
  };
  std::vector<float> wa = widen(a, f[OBER_MATMUL_A_BATCH] * m * k),
                     wb = widen(b, f[OBER_MATMUL_B_BATCH] * k * n),
                     wc(static_cast<size_t>(f[OBER_MATMUL_BATCH] * m * n));
  f[OBER_MATMUL_DTYPE] = static_cast<int64_t>(DType::F32);
  multiply(name, f, wa.data(), wb.data(), wc.data());
  char *pc = static_cast<char *>(dataOf(c, bytes));
  for (size_t i = 0; i < wc.size(); ++i)
    storeFloat(type, pc + i * bytes, wc[i]);
}

} // namespace

extern "C" {

void _mlir_ciface_ober_rt_cpu_matmul(const ober_rt_buffer *desc,
                                     const ober_rt_buffer *a,
                                     const ober_rt_buffer *b,
                                     ober_rt_buffer *c) {
  std::vector<int64_t> f = fieldsOf(desc);
  if (f[OBER_MATMUL_DTYPE] != static_cast<int64_t>(DType::F32))
    fail(OBER_RT_CPU_MATMUL, f,
         "the descriptor names another element type than f32");
  multiply(OBER_RT_CPU_MATMUL, f, dataOf(a), dataOf(b), dataOf(c));
}

#define OBER_RT_CPU_MATMUL_LOW_DEFINE(SUFFIX, TYPE)                           \
  void _mlir_ciface_ober_rt_cpu_matmul_##SUFFIX(                               \
      const ober_rt_buffer *desc, const ober_rt_buffer *a,                     \
      const ober_rt_buffer *b, ober_rt_buffer *c) {                            \
    lowPrecisionMatmul(OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_##TYPE, desc, \
                       a, b, c, DType::TYPE);                                  \
  }
OBER_RT_CPU_MATMUL_LOW_DEFINE(bf16, BF16)
OBER_RT_CPU_MATMUL_LOW_DEFINE(f16, F16)
#undef OBER_RT_CPU_MATMUL_LOW_DEFINE

void _mlir_ciface_ober_rt_cpu_conv(const ober_rt_buffer *desc,
                                   const ober_rt_buffer *x,
                                   const ober_rt_buffer *w,
                                   const ober_rt_buffer *bias,
                                   ober_rt_buffer *y) {
  std::vector<int64_t> f = fieldsOf(desc);
  ConvForward &conv = kernelFor<ConvForward>(OBER_RT_CPU_CONV, f, makeConv);
  guarded(OBER_RT_CPU_CONV, f, [&] {
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, conv.src.input(dataOf(x))},
        {DNNL_ARG_WEIGHTS, conv.weights.input(dataOf(w))},
        {DNNL_ARG_DST, conv.dst.output(dataOf(y))}};
    if (f[OBER_CONV_HAS_BIAS])
      args[DNNL_ARG_BIAS] = memory(conv.bias, context().engine, dataOf(bias));
    conv.primitive.execute(context().stream, args);
    conv.dst.finish(dataOf(y));
  });
}

void _mlir_ciface_ober_rt_cpu_conv_backward_data(const ober_rt_buffer *desc,
                                                 const ober_rt_buffer *dy,
                                                 const ober_rt_buffer *w,
                                                 ober_rt_buffer *dx) {
  std::vector<int64_t> f = fieldsOf(desc);
  ConvBackwardData &conv = kernelFor<ConvBackwardData>(
      OBER_RT_CPU_CONV_BACKWARD_DATA, f, makeConvBackwardData);
  guarded(OBER_RT_CPU_CONV_BACKWARD_DATA, f, [&] {
    conv.primitive.execute(
        context().stream,
        {{DNNL_ARG_DIFF_DST, conv.diffDst.input(dataOf(dy))},
         {DNNL_ARG_WEIGHTS, conv.weights.input(dataOf(w))},
         {DNNL_ARG_DIFF_SRC, conv.diffSrc.output(dataOf(dx))}});
    conv.diffSrc.finish(dataOf(dx));
  });
}

void _mlir_ciface_ober_rt_cpu_conv_backward_weights(const ober_rt_buffer *desc,
                                                    const ober_rt_buffer *x,
                                                    const ober_rt_buffer *dy,
                                                    ober_rt_buffer *dw) {
  std::vector<int64_t> f = fieldsOf(desc);
  ConvBackwardWeights &conv = kernelFor<ConvBackwardWeights>(
      OBER_RT_CPU_CONV_BACKWARD_WEIGHTS, f, makeConvBackwardWeights);
  guarded(OBER_RT_CPU_CONV_BACKWARD_WEIGHTS, f, [&] {
    conv.primitive.execute(
        context().stream,
        {{DNNL_ARG_SRC, conv.src.input(dataOf(x))},
         {DNNL_ARG_DIFF_DST, conv.diffDst.input(dataOf(dy))},
         {DNNL_ARG_DIFF_WEIGHTS, conv.diffWeights.output(dataOf(dw))}});
    conv.diffWeights.finish(dataOf(dw));
  });
}

int ober_rt_cpu_prepare_kernel(const char *name, const int64_t *desc,
                               int64_t size) {
  std::vector<int64_t> f(desc, desc + std::max<int64_t>(size, 0));
  auto has = [&](int64_t fields) {
    return static_cast<int64_t>(f.size()) >= fields;
  };
  auto convFields = [&] {
    return has(OBER_CONV_ARRAYS) && f[OBER_CONV_SPATIAL] >= 1 &&
           f[OBER_CONV_SPATIAL] <= 3 &&
           has(OBER_CONV_ARRAYS + OBER_CONV_NUM_ARRAYS * f[OBER_CONV_SPATIAL]);
  };
  std::string kernel = name;
  auto product = [&](const char *suffix, DType type) {
    return kernel == std::string(OBER_RT_CPU_MATMUL) + suffix &&
           has(OBER_MATMUL_FIELDS) &&
           f[OBER_MATMUL_DTYPE] == static_cast<int64_t>(type);
  };
  if (product("", DType::F32) ||
      product(OBER_RT_MATMUL_SUFFIX_BF16, DType::BF16) ||
      product(OBER_RT_MATMUL_SUFFIX_F16, DType::F16)) {
    // Every element type's product runs the f32 kernel.
    f[OBER_MATMUL_DTYPE] = static_cast<int64_t>(DType::F32);
    kernelFor<Matmul>(name, f, makeMatmul);
  } else if (kernel == OBER_RT_CPU_CONV && convFields())
    kernelFor<ConvForward>(name, f, makeConv);
  else if (kernel == OBER_RT_CPU_CONV_BACKWARD_DATA && convFields())
    kernelFor<ConvBackwardData>(name, f, makeConvBackwardData);
  else if (kernel == OBER_RT_CPU_CONV_BACKWARD_WEIGHTS && convFields())
    kernelFor<ConvBackwardWeights>(name, f, makeConvBackwardWeights);
  else
    return -1;
  return 0;
}

void ober_rt_cpu_set_threads(int threads) {
  if (threads > 0)
    omp_set_num_threads(threads);
}

int ober_rt_cpu_kernel_symbols(const char **names, void **addresses,
                               int capacity) {
  static const struct {
    const char *name;
    void *address;
  } symbols[] = {
      {"_mlir_ciface_" OBER_RT_CPU_MATMUL,
       reinterpret_cast<void *>(&_mlir_ciface_ober_rt_cpu_matmul)},
      {"_mlir_ciface_" OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_BF16,
       reinterpret_cast<void *>(&_mlir_ciface_ober_rt_cpu_matmul_bf16)},
      {"_mlir_ciface_" OBER_RT_CPU_MATMUL OBER_RT_MATMUL_SUFFIX_F16,
       reinterpret_cast<void *>(&_mlir_ciface_ober_rt_cpu_matmul_f16)},
      {"_mlir_ciface_" OBER_RT_CPU_CONV,
       reinterpret_cast<void *>(&_mlir_ciface_ober_rt_cpu_conv)},
      {"_mlir_ciface_" OBER_RT_CPU_CONV_BACKWARD_DATA,
       reinterpret_cast<void *>(&_mlir_ciface_ober_rt_cpu_conv_backward_data)},
      {"_mlir_ciface_" OBER_RT_CPU_CONV_BACKWARD_WEIGHTS,
       reinterpret_cast<void *>(
           &_mlir_ciface_ober_rt_cpu_conv_backward_weights)},
#ifdef OBER_RT_BF16_IN_FLOAT_REGISTER
      {"__truncsfbf2", reinterpret_cast<void *>(&__truncsfbf2)},
#endif
  };
  int count = sizeof(symbols) / sizeof(symbols[0]);
  for (int i = 0; i < count && i < capacity; ++i) {
    names[i] = symbols[i].name;
    addresses[i] = symbols[i].address;
  }
  return count;
}

} // extern "C"
