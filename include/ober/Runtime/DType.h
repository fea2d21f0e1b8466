//===- DType.h - element types of runtime tensors ---------------*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef OBER_RUNTIME_DTYPE_H
#define OBER_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ober::rt {

/// Element types of tensors in files (.npy, weights) and buffers.
/// `Unicode` holds fixed-width UTF-32 strings (NumPy's `<U<n>`); its size is
/// per character.
enum class DType { F16, BF16, F32, F64, Bool, I8, U8, I16, I32, I64, Unicode };

/// Bytes per element.
size_t dtypeSize(DType type);

/// The bytes of a tensor of `shape` with `elementBytes` per element, or
/// nothing when a size is negative or the total exceeds 2^62 bytes: what a
/// reader checks before it trusts a shape a file states.
std::optional<uint64_t> checkedBytes(const std::vector<int64_t> &shape,
                                     uint64_t elementBytes);

/// NumPy's name for the type (`float32`, `bfloat16`, `int64`, `bool`, ...).
const char *dtypeName(DType type);

/// The safetensors name (`F32`, `BF16`, `I64`, `BOOL`, ...).
const char *dtypeSafeTensorsName(DType type);
std::optional<DType> dtypeFromSafeTensorsName(const std::string &name);

/// MLIR's spelling of the element type (`f32`, `bf16`, `i64`, `i1`).
const char *dtypeMLIRName(DType type);
/// The numeric type named `name` in MLIR's spelling (`f32`, `bf16`, `i64`,
/// `i1`) or NumPy's (`float32`, `int64`, `bool`).
std::optional<DType> dtypeFromName(const std::string &name);
/// The names dtypeFromName takes, for error messages.
const char *dtypeNames();

/// The element of float type `type` (F16, BF16, F32, F64) at `p`, as a
/// double; 0 for other types.
double loadFloat(DType type, const void *p);
/// Stores `value` at `p` as `type` (F16, BF16, F32, F64), rounded to
/// nearest, ties to even (bf16 through f32, as the interpreter rounds);
/// NaN stays NaN. Other types are left alone.
void storeFloat(DType type, void *p, double value);

} // namespace ober::rt

/// The compiler runtime's f32-to-bf16 rounding (ties to even; NaN stays a
/// quiet NaN), which code generated for bf16 calls where a bf16 value
/// lives in a register: LLVM computes on it in f32 and rounds back through
/// this call (a loop-carried maximum in bf16, for example). libgcc has it
/// from GCC 13, Debian 12's has not, so the runtime (DType.cpp) provides
/// it to executables and to the JIT (ober_rt_cpu_kernel_symbols). On
/// x86-64 and AArch64 a bf16 result travels in the low 16 bits of a
/// floating-point register, where a float's low bits do; elsewhere the
/// compiler runtime's own is used.
#if defined(__x86_64__) || defined(__aarch64__)
#define OBER_RT_BF16_IN_FLOAT_REGISTER 1
extern "C" float __truncsfbf2(float f);
#endif

#endif // OBER_RUNTIME_DTYPE_H
