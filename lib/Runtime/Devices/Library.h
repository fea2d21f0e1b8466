//===- Library.h - shared libraries opened when first needed ----*- C++ -*-===//
//
// Part of Ober-Train's runtime (no MLIR). The CUDA libraries are opened
// with dlopen rather than linked, so a binary starts where they are absent
// and says which one it could not find.
//
//===----------------------------------------------------------------------===//

#ifndef OBER_LIB_RUNTIME_DEVICES_LIBRARY_H
#define OBER_LIB_RUNTIME_DEVICES_LIBRARY_H

#include <initializer_list>
#include <string>
#include <vector>

namespace ober::rt::cuda::detail {

/// A library opened from the first of several candidate paths.
struct Library {
  void *handle = nullptr;
  /// The candidate that loaded.
  std::string path;
  /// Why none loaded: each candidate's dlerror, "; "-separated.
  std::string error;
};

/// Opens the first of `candidates` that dlopen loads (RTLD_NOW,
/// RTLD_LOCAL); never throws.
Library openLibrary(const std::vector<std::string> &candidates);

/// `sonames` as the dynamic loader finds them (LD_LIBRARY_PATH, the
/// cache), then in the toolkit's lib64 under $CUDA_HOME and /usr/local/cuda:
/// the toolkit libraries (cuBLASLt, NCCL) are often installed only there.
std::vector<std::string>
toolkitCandidates(std::initializer_list<const char *> sonames);

/// The address of `symbol` in `library`, or null.
void *findSymbol(const Library &library, const char *symbol);

/// Points `function` at `name` in `library` (else at `fallback`, an older
/// name, when given); when neither is there, it is null and `name` is
/// added to `missing` (", "-separated) for the caller's message.
template <typename Function>
void bindSymbol(const Library &library, Function &function, const char *name,
                std::string &missing, const char *fallback = nullptr) {
  void *address = findSymbol(library, name);
  if (!address && fallback)
    address = findSymbol(library, fallback);
  if (!address)
    missing += (missing.empty() ? "" : ", ") + std::string(name);
  function = reinterpret_cast<Function>(address);
}

} // namespace ober::rt::cuda::detail

#endif // OBER_LIB_RUNTIME_DEVICES_LIBRARY_H
