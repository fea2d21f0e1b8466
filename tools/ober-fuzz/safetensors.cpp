//===- safetensors.cpp - fuzz target: the safetensors reader --------------===//
//
// Part of Ober-Train. Any bytes as a weights or checkpoint shard file:
// opened (header, dtypes, shapes and byte ranges validated), then every
// tensor read.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/Runtime/Weights.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober;
  std::string path = fuzz::writeScratch(
      "weights.safetensors",
      std::string(reinterpret_cast<const char *>(data), size));
  rt::WeightsFile file;
  std::string error;
  if (!file.open(path, error))
    return 0;
  std::vector<char> bytes;
  for (const rt::WeightInfo &info : file.entries()) {
    // Validated on open: every tensor lies inside the file.
    if (info.size > size || !file.read(info, bytes, error) ||
        bytes.size() != info.size || file.find(info.name) == nullptr)
      std::abort();
  }
  return 0;
}
