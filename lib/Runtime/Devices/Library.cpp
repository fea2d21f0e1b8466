//===- Library.cpp - shared libraries opened when first needed ------------===//
//
// Part of Ober-Train's runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "Library.h"

#include <cstdlib>
#include <dlfcn.h>

using namespace ober::rt::cuda::detail;

Library ober::rt::cuda::detail::openLibrary(
    const std::vector<std::string> &candidates) {
  Library library;
  for (const std::string &path : candidates) {
    if (void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      library.handle = handle;
      library.path = path;
      library.error.clear();
      return library;
    }
    const char *why = dlerror();
    library.error += (library.error.empty() ? "" : "; ") +
                     std::string(why ? why : path + ": not loadable");
  }
  return library;
}

std::vector<std::string> ober::rt::cuda::detail::toolkitCandidates(
    std::initializer_list<const char *> sonames) {
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    dirs.push_back(std::string(home) + "/lib64/");
  dirs.push_back("/usr/local/cuda/lib64/");
  std::vector<std::string> candidates(sonames.begin(), sonames.end());
  for (const std::string &dir : dirs)
    for (const char *soname : sonames)
      candidates.push_back(dir + soname);
  return candidates;
}

void *ober::rt::cuda::detail::findSymbol(const Library &library,
                                         const char *symbol) {
  return library.handle ? dlsym(library.handle, symbol) : nullptr;
}
