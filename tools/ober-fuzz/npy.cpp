//===- npy.cpp - fuzz target: the .npy reader -----------------------------===//
//
// Part of Ober-Train. Any bytes as an .npy image (what `--input` and data
// set folders hand the runtime): read whole, then header only.
//
//===----------------------------------------------------------------------===//

#include "ober/Runtime/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober::rt;
  const char *bytes = reinterpret_cast<const char *>(data);
  NpyArray whole, header;
  std::string error;
  bool read = parseNpy(bytes, size, whole, error);
  size_t offset = 0;
  bool headed = parseNpy(bytes, size, header, error, &offset);
  // A readable array has a readable header, inside the input, of the same
  // type and shape.
  if (read && (!headed || offset > size || header.shape != whole.shape ||
               header.type != whole.type || whole.numElements() < 0))
    std::abort();
  return 0;
}
