// calibrate.cu - measure a GPU's sustained matmul and memory throughput
//
// Part of Ober-Train. The cost model's device presets carry a matmul
// efficiency (sustained over peak bf16 tensor-core FLOP/s) and a memory
// efficiency (sustained over peak HBM bandwidth). This measures both on the
// GPU at hand: cuBLAS bf16 GEMMs with f32 accumulation at transformer
// shapes (hidden h, tokens b*s, the four GEMMs of a layer and their
// backward shapes) and a device-to-device copy. Prints one JSON object.
//
//   nvcc -O2 -o calibrate calibrate.cu -lcublas && ./calibrate
//
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    auto e = (x);                                                             \
    if (e != 0) {                                                             \
      std::fprintf(stderr, "%s failed: %d at line %d\n", #x, int(e),          \
                   __LINE__);                                                 \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

struct Shape {
  int m, n, k;
};

// Median time (s) of `reps` runs of C[m,n] = A[m,k] B[k,n].
static double gemmSeconds(cublasHandle_t h, Shape s, int reps) {
  __nv_bfloat16 *a, *b, *c;
  CHECK(cudaMalloc(&a, size_t(s.m) * s.k * 2));
  CHECK(cudaMalloc(&b, size_t(s.k) * s.n * 2));
  CHECK(cudaMalloc(&c, size_t(s.m) * s.n * 2));
  CHECK(cudaMemset(a, 0, size_t(s.m) * s.k * 2));
  CHECK(cudaMemset(b, 0, size_t(s.k) * s.n * 2));
  float one = 1, zero = 0;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  auto run = [&] {
    // Column-major: C^T[n,m] = B^T[n,k] A^T[k,m].
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b,
                       CUDA_R_16BF, s.n, a, CUDA_R_16BF, s.k, &zero, c,
                       CUDA_R_16BF, s.n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 3; ++i)
    run();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(start));
    run();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms / 1e3);
  }
  std::sort(times.begin(), times.end());
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  return times[times.size() / 2];
}

// Sustained device-to-device copy bandwidth (bytes read + written per s).
static double copyBandwidth(size_t bytes, int reps) {
  void *x, *y;
  CHECK(cudaMalloc(&x, bytes));
  CHECK(cudaMalloc(&y, bytes));
  CHECK(cudaMemset(x, 0, bytes));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i)
    CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return 2.0 * bytes * reps / (ms / 1e3);
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  std::printf("{\n  \"device\": \"%s\",\n  \"gemm\": [\n", prop.name);
  // Tokens b*s and hidden h of GPT layers (QKV, projection, MLP up and
  // down; forward shapes, and the weight-gradient shape k = tokens).
  std::vector<int> hiddens = {4096, 8192, 12288};
  std::vector<int> tokens = {4096, 8192};
  bool first = true;
  for (int hd : hiddens)
    for (int t : tokens) {
      Shape shapes[] = {{t, 3 * hd, hd}, {t, hd, hd}, {t, 4 * hd, hd},
                        {t, hd, 4 * hd}, {hd, 4 * hd, t}};
      for (Shape s : shapes) {
        double sec = gemmSeconds(h, s, 10);
        double tflops = 2.0 * s.m * s.n * s.k / sec / 1e12;
        std::printf("%s    {\"m\": %d, \"n\": %d, \"k\": %d, \"tflops\": %.1f}",
                    first ? "" : ",\n", s.m, s.n, s.k, tflops);
        first = false;
      }
    }
  double bw = copyBandwidth(size_t(2) << 30, 20);
  std::printf("\n  ],\n  \"copy_bytes_per_s\": %.4g\n}\n", bw);
  CHECK(cublasDestroy(h));
  return 0;
}
