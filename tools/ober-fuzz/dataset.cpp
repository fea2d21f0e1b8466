//===- dataset.cpp - fuzz target: data sets -------------------------------===//
//
// Part of Ober-Train. Any bytes as a data set, cut at "\n--\n": a
// Megatron-style token data set (the `.idx`, then the `.bin`), opened for
// samples of 8 int64 tokens and their targets; or, when the input starts
// as a .npy file does, a folder of arrays (`x.npy` for an f32 [3] input,
// then `y.npy` for an i64 [] one). The first samples of two epochs read.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/Runtime/DType.h"
#include "ober/Runtime/Dataset.h"

#include <cstdlib>
#include <sys/stat.h>

namespace {

using namespace ober;

/// The data set the input describes, written to the scratch folder: its
/// path and the inputs to open it for.
std::pair<std::string, std::vector<rt::SampleSpec>>
writeDataset(const std::vector<std::string> &parts) {
  if (parts[0].rfind("\x93NUMPY", 0) == 0) {
    std::string dir = fuzz::scratchDir() + "/arrays";
    ::mkdir(dir.c_str(), 0700);
    fuzz::writeScratch("arrays/x.npy", parts[0]);
    fuzz::writeScratch("arrays/y.npy", parts[1]);
    return {dir, {{"x", rt::DType::F32, {3}}, {"y", rt::DType::I64, {}}}};
  }
  constexpr int64_t kSeq = 8;
  fuzz::writeScratch("tokens.idx", parts[0]);
  return {fuzz::writeScratch("tokens.bin", parts[1]),
          {{"x", rt::DType::I64, {kSeq}}, {"y", rt::DType::I64, {kSeq}}}};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string> parts = fuzz::splitInput(data, size, 2);
  auto [path, specs] = writeDataset(parts);
  std::string error;
  std::unique_ptr<rt::Dataset> set = rt::openDataset(path, specs, error);
  if (!set)
    return 0;
  if (set->size() <= 0)
    std::abort(); // an open data set has samples
  (void)set->fingerprint();
  rt::SampleOrder order(set->size(), 1);
  std::vector<std::vector<char>> buffers;
  for (const rt::SampleSpec &s : specs)
    buffers.emplace_back(*rt::checkedBytes(s.shape, rt::dtypeSize(s.dtype)));
  for (int64_t p = 0; p < 2 * set->size() && p < 16; ++p)
    for (size_t k = 0; k < specs.size(); ++k)
      set->read(k, order.at(p), buffers[k].data());
  return 0;
}
