//===- dataset.cpp - fuzz target: a token data set ------------------------===//
//
// Part of Ober-Train. Any bytes as a Megatron-style token data set: the
// `.idx` and the `.bin` (the input cut at "\n--\n"), opened for samples of
// 8 int64 tokens and their targets; the first samples of two epochs read.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "ober/Runtime/Dataset.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ober;
  std::vector<std::string> parts = fuzz::splitInput(data, size, 2);
  fuzz::writeScratch("tokens.idx", parts[0]);
  std::string prefix = fuzz::writeScratch("tokens.bin", parts[1]);
  constexpr int64_t kSeq = 8;
  std::vector<rt::SampleSpec> specs = {{"x", rt::DType::I64, {kSeq}},
                                       {"y", rt::DType::I64, {kSeq}}};
  std::string error;
  std::unique_ptr<rt::Dataset> set = rt::openDataset(prefix, specs, error);
  if (!set)
    return 0;
  if (set->size() <= 0)
    std::abort(); // an open data set has samples
  (void)set->fingerprint();
  rt::SampleOrder order(set->size(), 1);
  std::vector<int64_t> tokens(kSeq);
  for (int64_t p = 0; p < 2 * set->size() && p < 16; ++p)
    for (size_t k = 0; k < specs.size(); ++k)
      set->read(k, order.at(p), reinterpret_cast<char *>(tokens.data()));
  return 0;
}
